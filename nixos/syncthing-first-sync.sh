# The first sync of a Quire vault shared through Syncthing (docs/SYNC.md): waits until Syncthing
# has scanned the folder and is up to date with at least one connected device of the folder, so
# Quire never serves a vault that is still arriving. nixos/module.nix runs it as Syncthing's user
# (for the API key in config.xml) in <unit>-first-sync.service, which then writes the marker.
#
# Ready means, on two polls in a row: the folder is idle, scanned, needs nothing and has no pull
# errors, and at least one of its devices is connected and has sent this device its index for the
# folder (`remoteState` "valid" where Syncthing reports it, else a RemoteIndexUpdated event). Only
# "idle and needs nothing" is not enough: right after connecting, before the other device's index
# has arrived, the folder looks up to date while it is still empty (tests/systemd/syncthing_first_sync.py).
#
# Environment: FOLDER (the folder ID), CONFIG (Syncthing's config.xml), GUI (host:port of the REST
# API), DEVICES (the folder's device IDs, space-separated), POLL_SECONDS (10). Runs until ready;
# the unit's TimeoutStartSec bounds it.
: "${FOLDER:?}" "${CONFIG:?}" "${GUI:?}" "${DEVICES:?}"
poll="${POLL_SECONDS:-10}"
api() { curl -fsS --max-time 20 -H "X-API-Key: $key" "http://$GUI/rest/$1"; }

ready_now() {
  key="$(sed -n 's|.*<apikey>\(.*\)</apikey>.*|\1|p' "$CONFIG" 2>/dev/null || true)"
  [ -n "$key" ] || return 1
  local status stats connections completion events device
  status="$(api "db/status?folder=$FOLDER")" || return 1
  jq -e '.state == "idle" and .needTotalItems == 0 and (.pullErrors // 0) == 0' <<<"$status" >/dev/null || return 1
  stats="$(api stats/folder)" || return 1
  jq -e --arg f "$FOLDER" '.[$f].lastScan // "" | startswith("0001") or . == "" | not' <<<"$stats" >/dev/null || return 1
  connections="$(api system/connections)" || return 1
  events="$(api "events?events=RemoteIndexUpdated&since=0&timeout=1")" || return 1
  indexed=0
  for device in $DEVICES; do
    jq -e --arg d "$device" '.connections[$d].connected // false' <<<"$connections" >/dev/null || continue
    completion="$(api "db/completion?folder=$FOLDER&device=$device")" || return 1
    if jq -e 'has("remoteState")' <<<"$completion" >/dev/null; then
      jq -e '.remoteState == "valid"' <<<"$completion" >/dev/null || continue
    else
      jq -e --arg d "$device" --arg f "$FOLDER" 'any(.[]; .data.device == $d and .data.folder == $f)' <<<"$events" >/dev/null || continue
    fi
    indexed=$((indexed + 1))
  done
  [ "$indexed" -gt 0 ]
}

streak=0
while true; do
  if ready_now; then
    streak=$((streak + 1))
    if [ "$streak" -ge 2 ]; then
      echo "syncthing first sync: folder $FOLDER is up to date with $indexed device(s)"
      exit 0
    fi
  else
    streak=0
    echo "syncthing first sync: waiting until folder $FOLDER is scanned and up to date with a connected device"
  fi
  sleep "$poll"
done
