# The first sync of a Quire vault shared through Syncthing (docs/SYNC.md): waits until Syncthing
# has scanned the folder and is up to date with at least one connected device of the folder, so
# Quire never serves a vault that is still arriving. nixos/module.nix runs it as Syncthing's user
# (for the API key in config.xml) in <unit>-first-sync.service, which then writes the marker.
#
# Environment: FOLDER (the folder ID), CONFIG (Syncthing's config.xml), GUI (host:port of the REST
# API), DEVICES (the folder's device IDs, space-separated). Runs until ready; the unit's
# TimeoutStartSec bounds it.
: "${FOLDER:?}" "${CONFIG:?}" "${GUI:?}" "${DEVICES:?}"
api() { curl -fsS --max-time 10 -H "X-API-Key: $key" "http://$GUI/rest/$1"; }
while true; do
  key="$(sed -n 's|.*<apikey>\(.*\)</apikey>.*|\1|p' "$CONFIG" 2>/dev/null || true)"
  ready=false
  if [ -n "$key" ] && status="$(api "db/status?folder=$FOLDER")" && stats="$(api stats/folder)" \
    && connections="$(api system/connections)"; then
    ready=true
    jq -e '.state == "idle" and .needTotalItems == 0 and .errors == 0' <<<"$status" >/dev/null || ready=false
    jq -e --arg f "$FOLDER" '.[$f].lastScan // "" | startswith("0001") or . == "" | not' <<<"$stats" >/dev/null || ready=false
    connected=0
    for device in $DEVICES; do
      if jq -e --arg d "$device" '.connections[$d].connected // false' <<<"$connections" >/dev/null; then
        connected=$((connected + 1))
        api "db/completion?folder=$FOLDER&device=$device" | jq -e '.completion == 100' >/dev/null || ready=false
      fi
    done
    [ "$connected" -gt 0 ] || ready=false
  fi
  if $ready; then
    echo "syncthing first sync: folder $FOLDER is up to date with $connected device(s)"
    exit 0
  fi
  echo "syncthing first sync: waiting until folder $FOLDER is scanned and up to date with a connected device"
  sleep 10
done
