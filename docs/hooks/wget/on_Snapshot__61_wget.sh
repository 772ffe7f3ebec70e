#!/bin/sh
# An example folio (and ArchiveBox) hook: mirror the page with its
# requisites into <snapshot>/wget/ with GNU wget.
#
# Install: copy this folder to <data>/custom_plugins/wget/ and keep the
# execute bit. folio runs it after the built-in plugins of lower order, in
# <snapshot>/wget/, as: on_Snapshot__61_wget.sh --url=URL
# with the settings (TIMEOUT, USER_AGENT, WGET_TIMEOUT, ...) and SNAP_DIR
# in the environment. The last ArchiveResult line it prints is its result.
url=${1#--url=}
if wget --quiet --timeout="${WGET_TIMEOUT:-${TIMEOUT:-60}}" --tries=1 --user-agent="$USER_AGENT" \
        --page-requisites --convert-links --adjust-extension --no-parent \
        --directory-prefix=. -e robots=off "$url"; then
    echo '{"type":"ArchiveResult","status":"succeeded","output_str":"wget"}'
else
    code=$?
    echo "{\"type\":\"ArchiveResult\",\"status\":\"failed\",\"output_str\":\"wget exited $code\"}"
    exit 1
fi
