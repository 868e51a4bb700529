#!/usr/bin/env bash
# The Debian packages Lectern needs on the machine, installed when missing: `make start` runs it for what the
# service itself uses, `.ci/run` with --test for the test tools as well. As root with apt-get it installs them;
# otherwise it prints the command to run and carries on (lectern start then reports what cannot run, and how to
# fix it, in its output, /readyz and `lectern doctor`).
set -euo pipefail

need=()
# Certificate PDFs are set in Noto (Latin, Cyrillic, Greek, Arabic, Hebrew; CJK): docs/certificates.md.
[ -f /usr/share/fonts/truetype/noto/NotoSansArabic-Regular.ttf ] || need+=(fonts-noto-core)
[ -f /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc ] || need+=(fonts-noto-cjk)
# The media worker reads video and audio with ffprobe and takes poster frames with ffmpeg: docs/media.md.
command -v ffprobe >/dev/null 2>&1 || need+=(ffmpeg)

if [ "${1:-}" = "--test" ]; then
  # The suite reads certificate PDFs back (pdftotext, pdftoppm + zbarimg for the QR), validates SCORM manifests
  # (xmllint) and drives the player in Debian's Chromium through playwright-core (no browser download).
  command -v pdftotext >/dev/null 2>&1 || need+=(poppler-utils)
  command -v zbarimg >/dev/null 2>&1 || need+=(zbar-tools)
  command -v openssl >/dev/null 2>&1 || need+=(openssl)
  command -v xmllint >/dev/null 2>&1 || need+=(libxml2-utils)
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
fi

[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing: ${need[*]}"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null) ||
    echo "warning: could not install ${need[*]}; what needs them will say so"
else
  echo "missing Debian packages: ${need[*]}"
  echo "  install them with: sudo apt-get install -y ${need[*]}"
  echo "  (lectern start runs without them; what needs them reports the same fix)"
fi
