// The rendered document and other operator-named outputs are published by the platform layer's
// private-file writer (platform/fs/private-file.ts): atomically, with each refusal an IO_ERROR
// that names the file as the operator gave it.
export { writePrivateFileAtomic } from "../../platform/fs/private-file.ts";
