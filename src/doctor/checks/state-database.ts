// The Bridge database: integrity and schema version. A schema newer than this binary means an
// older serverfs is being run against a newer deployment: the Bridge refuses to start
// (STATE_DATABASE_TOO_NEW), so that is a FAIL.
import { SCHEMA_VERSION } from "../../bridge/store/migrations.ts";
import { bridgeCommands } from "../bridge-commands.ts";
import type { DoctorContext } from "../context.ts";
import { fail, ok, warn, type CheckResult } from "../types.ts";

const ID = "state.database";
const LABEL = "state database";

export function stateDatabaseCheck(ctx: DoctorContext): CheckResult {
  const db = ctx.stateDatabase();
  if (db.kind === "absent") {
    return warn(ID, LABEL, "no database yet (the Bridge has not run with this state directory)", `start the Bridge once: ${bridgeCommands(ctx).start}`);
  }
  if (db.kind === "unreadable") {
    return fail(ID, LABEL, `${ctx.paths.dbPath} ${db.why}`, "stop the Bridge, move the database aside and start it again (task history is lost)");
  }
  const { integrity, userVersion } = db.snapshot;
  if (!(integrity.length === 1 && integrity[0] === "ok")) {
    const first = (integrity[0] ?? "no answer").slice(0, 200);
    return fail(
      ID,
      LABEL,
      `integrity_check reported ${integrity.length} problem(s), first: ${first}`,
      "run doctor again (a live Bridge may have been mid-checkpoint); if it persists, stop the Bridge, move the database aside and start it again",
    );
  }
  if (userVersion > SCHEMA_VERSION) {
    return fail(
      ID,
      LABEL,
      `schema version ${userVersion} is newer than this serverfs (${SCHEMA_VERSION})`,
      "run the newer serverfs that wrote it (the Bridge refuses this database: STATE_DATABASE_TOO_NEW)",
    );
  }
  if (userVersion < SCHEMA_VERSION) {
    return ok(ID, LABEL, `integrity ok, schema version ${userVersion} (migrated to ${SCHEMA_VERSION} at the next Bridge start)`);
  }
  return ok(ID, LABEL, `integrity ok, schema version ${userVersion}`);
}
