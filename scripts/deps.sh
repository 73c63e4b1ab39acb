#!/bin/sh
# Installs the Debian packages the build needs, only those that are missing.
set -e
need=""
[ -f /usr/include/cjson/cJSON.h ] || need="$need libcjson-dev"
command -v cmake >/dev/null 2>&1 || need="$need cmake"
[ -z "$need" ] && exit 0
echo "relayc: installing missing packages:$need"
if [ "$(id -u)" != 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need
