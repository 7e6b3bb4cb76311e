/*
 * bcryptprimitives.dll for Wine 8.0, which has none. Bun 1.4 imports ProcessPrng from it (Windows
 * 10+ exports it there); without it neither bun.exe nor serverfs.exe can start under Wine.
 * ProcessPrng fills a buffer from the system CSPRNG and never fails; RtlGenRandom
 * (advapi32!SystemFunction036) is the same generator, but takes a ULONG length, hence the chunks.
 * Built by scripts/windows-lane/install.sh; the DLL is never committed. Test-lane only: the
 * shipped executable never carries or needs it on real Windows.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
    if (!SystemFunction036(data, chunk)) return FALSE;
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved) {
  (void)instance;
  (void)reason;
  (void)reserved;
  return TRUE;
}
