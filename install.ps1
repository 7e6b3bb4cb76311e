# Installs serverfs.exe for Windows x64 from a GitHub release.
#
#   powershell -ExecutionPolicy Bypass -File install.ps1 [-Version X.Y.Z] [-Prefix DIR] [-BaseUrl URL]
#
# It downloads serverfs-windows-x64.exe and SHA256SUMS from the release, checks the executable's
# SHA-256 against SHA256SUMS, and only then moves it to DIR\serverfs.exe (default
# %LOCALAPPDATA%\Programs\serverfs). Nothing downloaded is ever run by this script.
# -BaseUrl is the directory that holds the release's files (default: the latest release, or the
# one -Version names).
[CmdletBinding()]
param(
  [string]$Version = "",
  [string]$Prefix = (Join-Path $env:LOCALAPPDATA "Programs\serverfs"),
  [string]$BaseUrl = ""
)
$ErrorActionPreference = "Stop"
$Repository = "serverfs/serverfs"
$Asset = "serverfs-windows-x64.exe"

function Fail([string]$Message) {
  [Console]::Error.WriteLine("serverfs install: $Message")
  exit 1
}

if (-not [Environment]::Is64BitOperatingSystem) { Fail "no serverfs build for 32-bit Windows" }
$arch = $env:PROCESSOR_ARCHITEW6432
if (-not $arch) { $arch = $env:PROCESSOR_ARCHITECTURE }
if ($arch -ne "AMD64") { Fail "no serverfs build for Windows on $arch (only x64)" }

if (-not $BaseUrl) {
  if ($Version) { $BaseUrl = "https://github.com/$Repository/releases/download/v$($Version.TrimStart('v'))" }
  else { $BaseUrl = "https://github.com/$Repository/releases/latest/download" }
}
$BaseUrl = $BaseUrl.TrimEnd("/")

$tmp = Join-Path ([IO.Path]::GetTempPath()) ("serverfs-install-" + [Guid]::NewGuid().ToString("N"))
New-Item -ItemType Directory -Path $tmp | Out-Null
try {
  [Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12
  $sumsFile = Join-Path $tmp "SHA256SUMS"
  $exeFile = Join-Path $tmp $Asset
  [Console]::Error.WriteLine("serverfs install: downloading $Asset from $BaseUrl")
  try { Invoke-WebRequest -UseBasicParsing -Uri "$BaseUrl/SHA256SUMS" -OutFile $sumsFile } catch { Fail "could not download $BaseUrl/SHA256SUMS" }
  try { Invoke-WebRequest -UseBasicParsing -Uri "$BaseUrl/$Asset" -OutFile $exeFile } catch { Fail "could not download $BaseUrl/$Asset" }

  $expected = $null
  foreach ($line in Get-Content $sumsFile) {
    $fields = $line -split "\s+", 2
    if ($fields.Count -eq 2 -and ($fields[1] -eq $Asset -or $fields[1] -eq "*$Asset")) { $expected = $fields[0].ToLowerInvariant(); break }
  }
  if (-not $expected) { Fail "SHA256SUMS has no line for $Asset" }
  $actual = (Get-FileHash -Algorithm SHA256 -Path $exeFile).Hash.ToLowerInvariant()
  if ($actual -ne $expected) { Fail "checksum mismatch for ${Asset}: SHA256SUMS says $expected, the download is $actual; nothing was installed" }

  New-Item -ItemType Directory -Force -Path $Prefix | Out-Null
  $target = Join-Path $Prefix "serverfs.exe"
  $staged = Join-Path $Prefix (".serverfs-" + [Guid]::NewGuid().ToString("N") + ".exe")
  Copy-Item -Path $exeFile -Destination $staged
  Move-Item -Force -Path $staged -Destination $target
  [Console]::Error.WriteLine("serverfs install: installed $target")

  $userPath = [Environment]::GetEnvironmentVariable("Path", "User")
  if (-not (($userPath -split ";") -contains $Prefix)) {
    [Console]::Error.WriteLine("serverfs install: $Prefix is not on your PATH; add it for your user with:")
    [Console]::Error.WriteLine("  [Environment]::SetEnvironmentVariable('Path', [Environment]::GetEnvironmentVariable('Path', 'User') + ';$Prefix', 'User')")
  }
} finally {
  Remove-Item -Recurse -Force -Path $tmp -ErrorAction SilentlyContinue
}
