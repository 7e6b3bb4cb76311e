// Which reparse tags stand for another name (never followed, typed as a symlink) and which mark a
// file that is what it is (served): IsReparseTagNameSurrogate, bit 29. Pure, so it runs anywhere.
import { expect, test } from "bun:test";
import { isNameSurrogate, TAG_MOUNT_POINT, TAG_SYMLINK } from "../../platform/fs/windows.ts";

test("symlinks, junctions and WSL links are name-surrogates; cloud, dedup and WOF tags are not", () => {
  const tags: Array<[string, number, boolean]> = [
    ["IO_REPARSE_TAG_SYMLINK", TAG_SYMLINK, true],
    ["IO_REPARSE_TAG_MOUNT_POINT", TAG_MOUNT_POINT, true],
    ["IO_REPARSE_TAG_LX_SYMLINK", 0xa000001d, true],
    ["IO_REPARSE_TAG_CLOUD_6 (OneDrive)", 0x9000601a, false],
    ["IO_REPARSE_TAG_CLOUD", 0x9000001a, false],
    ["IO_REPARSE_TAG_DEDUP", 0x80000013, false],
    ["IO_REPARSE_TAG_WOF", 0x80000017, false],
    ["IO_REPARSE_TAG_APPEXECLINK", 0x8000001b, false],
  ];
  expect(tags.map(([name, tag]) => [name, isNameSurrogate(tag)])).toEqual(tags.map(([name, , surrogate]) => [name, surrogate]));
});
