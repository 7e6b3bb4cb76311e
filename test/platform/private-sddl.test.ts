// The verdict on a file's SDDL that the Bridge token's privacy check on Windows rests on
// (platform/windows/private-sddl.ts). Pure: runs on every OS. The SDDL strings are the shapes
// GetNamedSecurityInfoW reports: Wine's synthesis from Unix modes, and Windows' own.
import { describe, expect, test } from "bun:test";
import { privateFileProblem } from "../../platform/windows/private-sddl.ts";
import { tokenFileSddl } from "../../platform/token.ts";

const ME = "S-1-5-21-1111-2222-3333-1001";
const OTHER = "S-1-5-21-1111-2222-3333-1002";

describe("privateFileProblem", () => {
  test("private: only the user, SYSTEM and Administrators are allowed in", () => {
    for (const sddl of [
      `O:${ME}D:P(A;;FA;;;${ME})`,
      `O:${ME}D:P(A;;FA;;;${ME})(D;;FA;;;WD)`,
      `O:${ME}D:(A;;FA;;;SY)(A;;FA;;;${ME})`,
      `O:BAD:P(A;;FA;;;BA)(A;;FA;;;S-1-5-18)(A;ID;FA;;;${ME.toLowerCase()})`,
      `O:${ME}D:PAI(A;;0x1f01ff;;;${ME})(A;;FA;;;OW)(A;OICIIO;FA;;;WD)(A;;0x0;;;WD)`,
      `O:${ME}D:P`,
    ]) {
      expect({ sddl, problem: privateFileProblem(sddl, ME) }).toEqual({ sddl, problem: null });
    }
  });

  test("the DACL serverfs gives a new token file passes", () => {
    expect(privateFileProblem(`O:${ME}${tokenFileSddl(ME)}`, ME)).toBeNull();
  });

  test("another owner, anyone else allowed, or no DACL at all is not private", () => {
    const cases: [string, string][] = [
      [`O:${OTHER}D:P(A;;FA;;;${ME})`, "it belongs to another user"],
      [`O:WDD:P(A;;FA;;;${ME})`, "it belongs to another user"],
      [`O:${ME}D:(A;;FA;;;SY)(A;;FA;;;${ME})(A;;0x1200a9;;;WD)`, "another user or group may access it"],
      [`O:${ME}D:P(A;;FR;;;AU)(A;;FA;;;${ME})`, "another user or group may access it"],
      [`O:${ME}D:P(A;;FA;;;${ME})(A;ID;FR;;;BU)`, "another user or group may access it"],
      [`O:${ME}D:P(A;;FA;;;${ME})(XA;;FR;;;${OTHER})`, "another user or group may access it"],
      // A conditional entry's expression has parentheses of its own: not parsed, so refused.
      [`O:${ME}D:P(A;;FA;;;${ME})(XA;;FR;;;${OTHER};(x))`, "its access control list cannot be read"],
      [`O:${ME}D:P(A;;FA;;;${ME})(A;;GR;;;CO)`, "another user or group may access it"],
      [`O:${ME}D:NO_ACCESS_CONTROL`, "its access control list admits everyone"],
      [`O:${ME}`, "it has no access control list"],
      [`D:P(A;;FA;;;${ME})`, "its owner cannot be read"],
      [`O:${ME}D:P(A;;FA;;;${ME}`, "its access control list cannot be read"],
    ];
    for (const [sddl, why] of cases) expect({ sddl, problem: privateFileProblem(sddl, ME) }).toEqual({ sddl, problem: why });
  });
});
