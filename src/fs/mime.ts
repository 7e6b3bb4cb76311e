// Extension-based MIME guess (non-strict), default application/octet-stream. A small fixed table:
// enough for the common text, image, archive and document types an assistant moves around.

const BY_EXTENSION: Record<string, string> = {
  txt: "text/plain", md: "text/markdown", markdown: "text/markdown", csv: "text/csv", tsv: "text/tab-separated-values",
  html: "text/html", htm: "text/html", css: "text/css", xml: "application/xml", json: "application/json",
  js: "text/javascript", mjs: "text/javascript", cjs: "text/javascript", ts: "text/x-typescript", py: "text/x-python",
  sh: "application/x-sh", c: "text/x-c", h: "text/x-c", rs: "text/x-rust", go: "text/x-go", java: "text/x-java",
  yaml: "application/yaml", yml: "application/yaml", toml: "application/toml", ini: "text/plain", log: "text/plain",
  svg: "image/svg+xml", png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp",
  bmp: "image/bmp", ico: "image/vnd.microsoft.icon", tif: "image/tiff", tiff: "image/tiff", avif: "image/avif",
  pdf: "application/pdf", zip: "application/zip", gz: "application/gzip", tgz: "application/gzip", tar: "application/x-tar",
  bz2: "application/x-bzip2", xz: "application/x-xz", "7z": "application/x-7z-compressed", zst: "application/zstd",
  wasm: "application/wasm", mp3: "audio/mpeg", wav: "audio/wav", ogg: "audio/ogg", flac: "audio/flac",
  mp4: "video/mp4", webm: "video/webm", mov: "video/quicktime", woff: "font/woff", woff2: "font/woff2", ttf: "font/ttf",
  otf: "font/otf", doc: "application/msword", docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xls: "application/vnd.ms-excel", xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  ppt: "application/vnd.ms-powerpoint", pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  sqlite: "application/vnd.sqlite3", db: "application/octet-stream", bin: "application/octet-stream",
};

export function mimeTypeFor(name: string): string {
  const dot = name.lastIndexOf(".");
  if (dot <= 0 || dot === name.length - 1) return "application/octet-stream";
  return BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? "application/octet-stream";
}
