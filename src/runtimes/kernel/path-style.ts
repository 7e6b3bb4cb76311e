// Whether a host path a provider printed is spelled the Windows way (a drive letter or a UNC
// prefix), so redaction matches it case-insensitively and with either separator. Lexical: the
// Bridge on Linux may still see Windows paths in a provider's output, and the other way round.
export function isWindowsStyle(p: string): boolean {
  return /^[A-Za-z]:[\\/]/.test(p) || p.startsWith("\\\\");
}
