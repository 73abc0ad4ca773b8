# The git sync backend: one round of "snapshot the vault, merge with the remote, push", written so
# that it can never destroy a note (docs/SYNC.md has the whole design and the protocol with Quire).
#
#   quire-git-sync           one round (the timer's unit)
#   quire-git-sync --first   the first-sync gate: exits at once when the first-sync marker exists,
#                            else retries transient failures until a round succeeds (its unit's
#                            TimeoutStartSec bounds it) and writes the marker
#
# Environment: VAULT, REMOTE, BRANCH (main), AUTHOR_NAME, AUTHOR_EMAIL; GIT_SSH_COMMAND when a key is
# set; QUIRE_SYNC_LOCK (the lock file shared with Quire), QUIRE_SYNC_MARKER, QUIRE_SYNC_STATUS,
# QUIRE_SYNC_HOST, QUIRE_SYNC_TIMEOUT, QUIRE_SYNC_LOCK_WAIT, QUIRE_SYNC_RETRY_SECONDS,
# QUIRE_SYNC_FIRST_ATTEMPTS; the guard's QUIRE_SYNC_GUARD_* (first-sync-guard.sh).
# Exit status: 0 synced (conflicts included: they are resolved and listed in the status file);
# 1 a transient failure (network, remote moved, lock busy), retried by the next round;
# 2 the owner must act (deletion guard, foreign clone, missing vault, git state left by hand).
#
# The rules: HEAD moves only after the files it describes are on disk; the live tree is never
# reset, rebased or checked out wholesale; a file in the live tree is replaced only when upstream
# changed it and its content still equals the version the merge started from (checked again right
# before the rename); a conflict keeps the remote version at the path and saves the local one
# beside it; every pushed commit has the remote tip as its only parent, so local history that a
# force-push removed is never pushed back, and a file the forge rejects stops blocking once removed.
set -euo pipefail
shopt -s inherit_errexit

first=false
case "${1:-}" in
  --first) first=true ;;
  "") ;;
  *)
    echo "usage: quire-git-sync [--first]" >&2
    exit 2
    ;;
esac

: "${VAULT:?VAULT must name the vault folder}"
: "${REMOTE:?REMOTE must name the remote repository}"
BRANCH="${BRANCH:-main}"
host="${QUIRE_SYNC_HOST:-$(uname -n)}"
host="${host//\//-}"
AUTHOR_NAME="${AUTHOR_NAME:-Quire}"
AUTHOR_EMAIL="${AUTHOR_EMAIL:-quire@$host}"
net_timeout="${QUIRE_SYNC_TIMEOUT:-300}"
lock_wait="${QUIRE_SYNC_LOCK_WAIT:-60}"
retry_seconds="${QUIRE_SYNC_RETRY_SECONDS:-30}"
first_attempts="${QUIRE_SYNC_FIRST_ATTEMPTS:-0}"
state_dir="${STATE_DIRECTORY:-}"
state_dir="${state_dir%%:*}"
if [ -n "$state_dir" ]; then
  marker="${QUIRE_SYNC_MARKER:-$state_dir/first-sync-done}"
  status_file="${QUIRE_SYNC_STATUS:-$state_dir/status.json}"
else
  marker="${QUIRE_SYNC_MARKER:-$VAULT/.git/quire/first-sync-done}"
  status_file="${QUIRE_SYNC_STATUS:-$VAULT/.git/quire/status.json}"
fi
lock_file="${QUIRE_SYNC_LOCK:-}"

# Never prompt, never stall: ssh fails instead of asking and gives up on a silent peer, HTTP gives
# up below 1 kB/s for a minute, and every network command is killed after QUIRE_SYNC_TIMEOUT
# seconds whatever the protocol (git://, a hung server). Options already in GIT_SSH_COMMAND win
# (ssh takes the first value of each option).
export GIT_TERMINAL_PROMPT=0 GIT_LITERAL_PATHSPECS=1 LC_ALL=C
export GIT_SSH_COMMAND="${GIT_SSH_COMMAND:-ssh} -o BatchMode=yes -o ConnectTimeout=30 -o ServerAliveInterval=15 -o ServerAliveCountMax=4"
vault_real="$(cd "$VAULT" 2>/dev/null && pwd -P || printf '%s' "$VAULT")"
gitc=(git -c safe.directory="$VAULT" -c safe.directory="$vault_real"
  -c user.name="$AUTHOR_NAME" -c user.email="$AUTHOR_EMAIL"
  -c core.hooksPath=/dev/null -c core.fsmonitor=false -c core.autocrlf=false -c core.quotePath=false
  -c gc.auto=0 -c maintenance.auto=false -c commit.gpgSign=false -c merge.renames=true
  -c http.lowSpeedLimit=1000 -c http.lowSpeedTime=60)
g() { "${gitc[@]}" "$@"; }
net() { timeout --kill-after=10 "$net_timeout" "${gitc[@]}" "$@"; }
log() { printf 'git sync: %s\n' "$*" >&2; }
now() { date -u +%Y-%m-%dT%H:%M:%SZ; }

json_str() {
  local s="$1"
  s="${s//\\/\\\\}"
  s="${s//\"/\\\"}"
  s="${s//$'\n'/\\n}"
  s="${s//$'\r'/\\r}"
  s="${s//$'\t'/\\t}"
  s="${s//[$'\001'-$'\037']/?}"
  printf '"%s"' "$s"
}

# The record of conflicts, kept beside the repository (never synced): NUL-separated
# at, path, saved_as, kind.
conflict_log() { printf '%s\n' "$VAULT/.git/quire/conflicts"; }

# Writes the status file atomically: the last attempt, the last success, and the conflicts whose
# saved copy still exists (kept 7 days when the copy is the note itself, a delete-vs-edit).
write_status() {
  local ok="$1" message="$2" at last_success="null" previous tmp log_file entries="" sep=""
  local c_at c_path c_saved c_kind cutoff kept_log
  at="$(now)"
  if [ "$ok" = true ]; then
    last_success="\"$at\""
  elif [ -f "$status_file" ]; then
    previous="$(<"$status_file")"
    if [[ $previous =~ \"last_success\":\ *\"([^\"]*)\" ]]; then
      last_success="\"${BASH_REMATCH[1]}\""
    fi
  fi
  log_file="$(conflict_log)"
  if [ -f "$log_file" ]; then
    cutoff="$(date -u -d '7 days ago' +%s)"
    kept_log="$log_file.tmp"
    : >"$kept_log"
    while IFS= read -r -d '' c_at && IFS= read -r -d '' c_path &&
      IFS= read -r -d '' c_saved && IFS= read -r -d '' c_kind; do
      [ -e "$VAULT/$c_saved" ] || continue
      if [ "$c_saved" = "$c_path" ] && [ "$(date -u -d "$c_at" +%s)" -lt "$cutoff" ]; then continue; fi
      printf '%s\0%s\0%s\0%s\0' "$c_at" "$c_path" "$c_saved" "$c_kind" >>"$kept_log"
      entries+="$sep{\"path\": $(json_str "$c_path"), \"saved_as\": $(json_str "$c_saved"), \"at\": \"$c_at\", \"kind\": $(json_str "$c_kind")}"
      sep=", "
    done <"$log_file"
    mv -f -- "$kept_log" "$log_file"
  fi
  mkdir -p -- "$(dirname -- "$status_file")" || return 0
  tmp="$status_file.tmp.$$"
  printf '{"last_attempt": "%s", "last_success": %s, "ok": %s, "message": %s, "conflicts": [%s]}\n' \
    "$at" "$last_success" "$ok" "$(json_str "$message")" "$entries" >"$tmp" &&
    mv -f -- "$tmp" "$status_file"
}

write_marker() {
  local tmp="$marker.tmp.$$"
  [ -e "$marker" ] && return 0
  mkdir -p -- "$(dirname -- "$marker")"
  printf 'first sync of %s with %s completed at %s\n' "$VAULT" "$REMOTE" "$(now)" >"$tmp"
  mv -f -- "$tmp" "$marker"
  log "first sync complete: wrote $marker"
}

# --- one round -------------------------------------------------------------------------------
# Everything below runs in a subshell per round; `fail` ends the round with a status message.

message="interrupted"
fail() {
  local code="$1"
  shift
  message="$*"
  log "$*"
  exit "$code"
}

finish() {
  local rc="$1"
  set +e
  [ -n "${tmpdir:-}" ] && rm -rf -- "$tmpdir"
  if [ "$rc" -eq 0 ]; then
    write_status true "$message"
  else
    [ "$message" = interrupted ] && message="interrupted (exit $rc); the next round resumes where this one stopped"
    write_status false "$message"
  fi
}

lock_vault() {
  [ -n "$lock_file" ] || return 0
  flock -x -w "$lock_wait" "$lock_fd" ||
    fail 1 "Quire kept the vault busy for ${lock_wait}s (lock $lock_file); the next round retries"
}
unlock_vault() {
  [ -n "$lock_file" ] || return 0
  flock -u "$lock_fd"
}

record_conflict() {
  local path="$1" saved="$2" kind="$3" log_file
  log_file="$(conflict_log)"
  mkdir -p -- "$(dirname -- "$log_file")"
  printf '%s\0%s\0%s\0%s\0' "$(now)" "$path" "$saved" "$kind" >>"$log_file"
  log "conflict: $path: $kind (kept as $saved)"
  conflicts=$((conflicts + 1))
}

# A merge's conflicts are recorded only once its pass reached the live tree.
pend_conflict() { pending+=("$1" "$2" "$3"); }
flush_conflicts() {
  local i
  for ((i = 0; i < ${#pending[@]}; i += 3)); do
    record_conflict "${pending[i]}" "${pending[i + 1]}" "${pending[i + 2]}"
  done
  pending=()
}

zero=0000000000000000000000000000000000000000

# live_is PATH MODE OID: the live file still holds that version (OID all zeros: does not exist).
live_is() {
  local path="$1" mode="$2" oid="$3"
  if [ "${oid//0/}" = "" ]; then
    [ ! -e "$path" ] && [ ! -L "$path" ]
  elif [ "$mode" = 120000 ]; then
    [ -L "$path" ] && [ "$(printf '%s' "$(readlink -- "$path")" | g hash-object --stdin)" = "$oid" ]
  else
    [ -f "$path" ] && [ ! -L "$path" ] && [ "$(g hash-object -- "$path" 2>/dev/null)" = "$oid" ]
  fi
}

# put PATH NEWMODE NEWOID OLDMODE OLDOID: replace the live file with a blob (or delete it when
# NEWOID is zero) if it still holds the old version. Sets put_ok=false (and touches nothing) when
# the file changed meanwhile; a write error (a full disk) ends the round before HEAD moves.
# (Functions report through variables, not their status: a status tested by `if` would switch
# errexit off inside them.)
put() {
  local path="$1" mode="$2" oid="$3" old_mode="$4" old_oid="$5" dir tmp
  put_ok=true
  if ! live_is "$path" "$old_mode" "$old_oid"; then
    put_ok=false
    return 0
  fi
  dir="$(dirname -- "$path")"
  if [ "${oid//0/}" = "" ]; then
    rm -f -- "$path"
    [ "$dir" = . ] || rmdir -p --ignore-fail-on-non-empty -- "$dir" 2>/dev/null || true
    return 0
  fi
  mkdir -p -- "$dir" || fail 1 "could not create the folder $dir (disk full?); the next round resumes"
  tmp="$dir/.quire-sync-$$-$RANDOM.tmp"
  if [ "$mode" = 120000 ]; then
    ln -s -- "$(g cat-file blob "$oid")" "$tmp" || { rm -f -- "$tmp"; fail 1 "could not write $path; the next round resumes"; }
  else
    if ! g cat-file blob "$oid" >"$tmp"; then
      rm -f -- "$tmp"
      fail 1 "could not write $path (disk full?); nothing was committed, the next round resumes"
    fi
    if [ -f "$path" ]; then chmod --reference="$path" -- "$tmp" 2>/dev/null || true; fi
    if [ "$mode" = 100755 ]; then chmod +x -- "$tmp"; fi
  fi
  # Checked again right before the rename: a write that landed meanwhile wins.
  if ! live_is "$path" "$old_mode" "$old_oid"; then
    rm -f -- "$tmp"
    put_ok=false
    return 0
  fi
  mv -f -T -- "$tmp" "$path" || { rm -f -- "$tmp"; fail 1 "could not replace $path; the next round resumes"; }
  wrote=$((wrote + 1))
}

# conflict_copy PATH OID TREE: a free name beside PATH for a saved local version, "Note (conflict
# <host> <YYYY-MM-DD HHMM>).md", then " 2", " 3"...; free means absent from TREE and from the live
# tree, or already holding exactly this content (an interrupted round resumed).
conflict_copy() {
  local path="$1" oid="$2" tree="$3" dir name stem ext stamp n=1 candidate
  dir="$(dirname -- "$path")"
  name="$(basename -- "$path")"
  if [[ $name == ?*.* ]]; then
    stem="${name%.*}"
    ext=".${name##*.}"
  else
    stem="$name"
    ext=""
  fi
  # A copy of this content saved by an interrupted earlier round (perhaps a minute earlier).
  local f
  shopt -s nullglob dotglob
  for f in "$dir"/*; do
    [ "$dir" = . ] && f="${f#./}"
    if [[ ${f##*/} == "$stem (conflict $host "*")$ext" ]] && [ -f "$f" ] && [ ! -L "$f" ] &&
      [ "$(g hash-object -- "$f")" = "$oid" ]; then
      shopt -u nullglob dotglob
      printf '%s\n' "$f"
      return 0
    fi
  done
  shopt -u nullglob dotglob
  stamp="$(date -u '+%Y-%m-%d %H%M')"
  while :; do
    candidate="$stem (conflict $host $stamp"
    [ "$n" -gt 1 ] && candidate+=" $n"
    candidate+=")$ext"
    [ "$dir" = . ] || candidate="$dir/$candidate"
    if g cat-file -e "$tree:$candidate" 2>/dev/null; then
      # Saved by an interrupted earlier pass: the same copy again.
      [ "$(g rev-parse "$tree:$candidate")" = "$oid" ] && break
    else
      if [ ! -e "$candidate" ] && [ ! -L "$candidate" ]; then break; fi
      if [ -f "$candidate" ] && [ "$(g hash-object -- "$candidate")" = "$oid" ]; then break; fi
    fi
    n=$((n + 1))
  done
  printf '%s\n' "$candidate"
}

setup_repository() {
  local url
  if [ ! -e .git ]; then
    g init --quiet --initial-branch "$BRANCH"
    g remote add origin "$REMOTE"
    log "initialised $VAULT for $REMOTE"
  elif [ ! -d .git ]; then
    fail 2 "$VAULT/.git is not a folder (a worktree or a submodule?); the git sync needs a plain clone"
  fi
  url="$(g config --get remote.origin.url || true)"
  if [ -z "$url" ]; then
    if g rev-parse --verify --quiet HEAD >/dev/null; then
      fail 2 "$VAULT has git history but no remote \"origin\"; refusing to merge it into $REMOTE. Add the remote yourself (git -C $VAULT remote add origin $REMOTE) if that history belongs there."
    fi
    g remote add origin "$REMOTE"
  elif [ "$url" != "$REMOTE" ]; then
    fail 2 "$VAULT is a clone of $url, not of $REMOTE; refusing to re-point it. If the vault should sync with $REMOTE, run git -C $VAULT remote set-url origin $REMOTE yourself (the histories must be related), or move the vault's .git away to adopt $REMOTE afresh."
  fi
  local op
  for op in rebase-merge rebase-apply MERGE_HEAD CHERRY_PICK_HEAD REVERT_HEAD; do
    if [ -e ".git/$op" ]; then
      fail 2 "a git operation was left in progress in $VAULT (.git/$op, perhaps by an older version of this script); finish it with git or remove .git/$op, checking the notes for conflict markers. The sync does not touch the vault until then."
    fi
  done
  if [ "$(g symbolic-ref --quiet HEAD || true)" != "refs/heads/$BRANCH" ]; then
    fail 2 "HEAD of $VAULT is not the branch $BRANCH ($(g symbolic-ref --quiet --short HEAD || echo detached)); switch it back by hand (git -C $VAULT symbolic-ref HEAD refs/heads/$BRANCH)"
  fi
}

clean_leftovers() {
  local f
  # The run lock is held, so a git lock file older than a minute was left by a killed round (or
  # a crashed git); a fresh one may belong to someone running git in the vault by hand.
  while IFS= read -r -d '' f; do
    log "removing the stale $f left by an interrupted round"
    rm -f -- "$f"
  done < <(find .git -path .git/objects -prune -o -type f -name '*.lock' -mmin +1 -print0)
  f="$(find .git -path .git/objects -prune -o -type f -name '*.lock' -print -quit)"
  [ -z "$f" ] || fail 1 "git is busy in $VAULT ($f is fresh: someone running git there?); the next round retries, and removes it once it is a minute old"
  find . -path ./.git -prune -o -type f -name '.quire-sync-*.tmp' -exec rm -f -- {} +
  # Never committed: Quire's temp files, its lock (when kept in the vault), this script's temp files.
  mkdir -p .git/info .git/quire
  local exclude=.git/info/exclude line rel
  local -a wanted=('.quire-*.tmp')
  if [ -n "$lock_file" ] && [[ $lock_file == "$VAULT"/* ]]; then
    rel="${lock_file#"$VAULT"/}"
    wanted+=("/$rel")
  fi
  touch "$exclude"
  for line in "${wanted[@]}"; do
    has_line "$line" "$exclude" || printf '%s\n' "$line" >>"$exclude"
  done
}

has_line() {
  local have
  while IFS= read -r have; do
    [ "$have" = "$1" ] && return 0
  done <"$2"
  return 1
}

fetch() {
  local out
  if ! out="$(net fetch --quiet --no-tags --prune --no-recurse-submodules origin \
    "+refs/heads/*:refs/remotes/origin/*" 2>&1)"; then
    fail 1 "could not fetch from $REMOTE (network down, or no answer within ${net_timeout}s): ${out:-timed out}"
  fi
  R="$(g rev-parse --verify --quiet "refs/remotes/origin/$BRANCH^{commit}" || true)"
}

# First round of a vault without history: make the remote's files present without ever replacing a
# local file by the remote one silently (a differing local file is saved as a conflict copy first),
# and move HEAD only when every file is on disk. Interrupted anywhere, the next round starts over
# and finds the work done so far.
adopt() {
  local index="$tmpdir/adopt-index" status path local_oid local_mode copy tmp
  local -A mode_of=() oid_of=()
  local meta line mode oid
  adopt_ok=true
  while IFS= read -r -d '' line; do
    meta="${line%%$'\t'*}"
    path="${line#*$'\t'}"
    read -r mode _ oid <<<"$meta"
    mode_of[$path]="$mode"
    oid_of[$path]="$oid"
  done < <(g ls-tree -r -z "$R")
  GIT_INDEX_FILE="$index" g read-tree "$R"
  GIT_INDEX_FILE="$index" g update-index -q --refresh >/dev/null 2>&1 || true
  while IFS= read -r -d '' status && IFS= read -r -d '' path; do
    [ "${mode_of[$path]}" = 160000 ] && continue
    case "$status" in
      D)
        put "$path" "${mode_of[$path]}" "${oid_of[$path]}" 100644 "$zero"
        $put_ok || adopt_ok=false
        ;;
      *)
        if [ -d "$path" ] && [ ! -L "$path" ]; then
          # A folder here, a file on the remote: the remote file is saved beside the folder.
          copy="$(conflict_copy "$path" "${oid_of[$path]}" "$R")"
          put "$copy" "${mode_of[$path]}" "${oid_of[$path]}" 100644 "$zero"
          if $put_ok; then
            record_conflict "$path" "$copy" "first sync: a folder here, a file on the remote: the remote file is kept beside the folder"
          elif ! live_is "$copy" "${mode_of[$path]}" "${oid_of[$path]}"; then
            adopt_ok=false
          fi
          continue
        fi
        if [ -L "$path" ]; then
          local_mode=120000
          local_oid="$(printf '%s' "$(readlink -- "$path")" | g hash-object --stdin)"
        else
          local_mode=100644
          local_oid="$(g hash-object -- "$path")"
        fi
        [ "$local_oid" = "${oid_of[$path]}" ] && continue
        copy="$(conflict_copy "$path" "$local_oid" "$R")"
        if [ ! -e "$copy" ]; then
          # The local version goes beside the note first (a copy, checked, renamed into place).
          tmp="$(dirname -- "$copy")/.quire-sync-$$-$RANDOM.tmp"
          if ! cp -P -p -- "$path" "$tmp"; then
            rm -f -- "$tmp"
            fail 1 "could not save the local $path as $copy (disk full?); nothing was committed, the next round resumes"
          fi
          if ! live_is "$tmp" "$local_mode" "$local_oid"; then
            rm -f -- "$tmp"
            adopt_ok=false
            continue
          fi
          mv -n -T -- "$tmp" "$copy"
          rm -f -- "$tmp"
        fi
        put "$path" "${mode_of[$path]}" "${oid_of[$path]}" "$local_mode" "$local_oid"
        if $put_ok; then
          record_conflict "$path" "$copy" "first sync: this device and the remote both had the file; the remote version is kept at the path, this device's beside it"
        else
          adopt_ok=false
        fi
        ;;
    esac
  done < <(GIT_INDEX_FILE="$index" g diff-files -z --name-status)
  $adopt_ok || return 0
  # Every file is on disk (synced to it) before HEAD says so.
  sync -f . 2>/dev/null || sync
  g update-ref "refs/heads/$BRANCH" "$R" ""
  g read-tree "$R"
  g update-ref refs/quire/synced "$R"
  log "adopted $REMOTE ($BRANCH at ${R:0:12})"
}

# The local snapshot: the live tree as a commit on HEAD (the deletion guard first).
snapshot() {
  local tree head_tree
  if ! g add --all --ignore-errors 2>"$tmpdir/add.err"; then
    # A file renamed or deleted between git's listing and its read: once more, then go on with
    # what could be read (the rest is committed by the next round).
    sleep 0.2
    g add --all --ignore-errors 2>"$tmpdir/add.err" || log "some files could not be read and wait for the next round: $(<"$tmpdir/add.err")"
  fi
  tree="$(g write-tree)"
  L="$(g rev-parse --verify --quiet HEAD || true)"
  if [ -n "$L" ]; then
    head_tree="$(g rev-parse "$L^{tree}")"
    [ "$tree" = "$head_tree" ] && return 0
    if ! first-sync-guard git "$VAULT" "$L" "$tree" 2>"$tmpdir/guard"; then
      g read-tree "$L"
      cat "$tmpdir/guard" >&2
      fail 2 "$(<"$tmpdir/guard")"
    fi
    L="$(g commit-tree "$tree" -p "$L" -m "Quire sync from $host at $(now) (local snapshot)")"
    g update-ref "refs/heads/$BRANCH" "$L" "$(g rev-parse HEAD)"
  else
    [ -z "$(g ls-files)" ] && return 0
    L="$(g commit-tree "$tree" -m "Quire sync from $host at $(now)")"
    g update-ref "refs/heads/$BRANCH" "$L" ""
  fi
  local_changes=1
}

# merge_trees BASE OURS THEIRS: the merged tree in M_tree; conflicts resolved (remote at the path,
# local beside it; an edit wins over a delete) and recorded.
merge_trees() {
  local base="$1" ours="$2" theirs="$3" out="$tmpdir/merge" rc=0 tree rec meta path stage oid mode
  local index="$tmpdir/merge-index" entries="$tmpdir/entries" copy
  local -A s2m=() s2o=() s3m=() s3o=() seen=()
  local -a paths=()
  g merge-tree --write-tree --no-messages -z --merge-base="$base" "$ours" "$theirs" >"$out" || rc=$?
  [ "$rc" -le 1 ] || fail 1 "git merge-tree failed (exit $rc); nothing was changed"
  {
    IFS= read -r -d '' tree
    while IFS= read -r -d '' rec && [ -n "$rec" ]; do
      meta="${rec%%$'\t'*}"
      path="${rec#*$'\t'}"
      read -r mode oid stage <<<"$meta"
      [ -n "${seen[$path]:-}" ] || { seen[$path]=1; paths+=("$path"); }
      case "$stage" in
        2) s2m[$path]="$mode" s2o[$path]="$oid" ;;
        3) s3m[$path]="$mode" s3o[$path]="$oid" ;;
      esac
    done
  } <"$out"
  M_tree="$tree"
  [ "$rc" -eq 0 ] && return 0
  GIT_INDEX_FILE="$index" g read-tree "$tree"
  : >"$entries"
  for path in "${paths[@]}"; do
    if [ -n "${s3o[$path]:-}" ]; then
      printf '%s %s\t%s\0' "${s3m[$path]}" "${s3o[$path]}" "$path" >>"$entries"
      if [ -n "${s2o[$path]:-}" ] && [ "${s2o[$path]}" != "${s3o[$path]}" ]; then
        copy="$(conflict_copy "$path" "${s2o[$path]}" "$tree")"
        printf '%s %s\t%s\0' "${s2m[$path]}" "${s2o[$path]}" "$copy" >>"$entries"
        pend_conflict "$path" "$copy" "edited here and on the remote: the remote version is kept at the path, this device's beside it"
      elif [ -z "${s2o[$path]:-}" ]; then
        pend_conflict "$path" "$path" "deleted here, edited on the remote: the edited note is kept"
      fi
    elif [ -n "${s2o[$path]:-}" ]; then
      printf '%s %s\t%s\0' "${s2m[$path]}" "${s2o[$path]}" "$path" >>"$entries"
      pend_conflict "$path" "$path" "deleted on the remote, edited here: the edited note is kept"
    else
      printf '0 %s\t%s\0' "$zero" "$path" >>"$entries"
    fi
  done
  GIT_INDEX_FILE="$index" g update-index -z --index-info <"$entries" ||
    fail 1 "could not resolve the conflicts of this merge; nothing was changed"
  M_tree="$(GIT_INDEX_FILE="$index" g write-tree)" ||
    fail 1 "could not resolve the conflicts of this merge; nothing was changed"
}

# restore_trashed BASE OURS: git follows renames, so a remote edit to a note this device moved into
# .trash/ (Quire's delete) would land in the trash. Such a note is put back at its path with the
# edit (the trash keeps the version that was deleted): an edit wins over a delete.
restore_trashed() {
  local base="$1" ours="$2" meta old new mode m_oid l_oid entries="$tmpdir/trash-entries" index="$tmpdir/trash-index"
  : >"$entries"
  while IFS= read -r -d '' meta && IFS= read -r -d '' old && IFS= read -r -d '' new; do
    case "$new" in .trash/*) ;; *) continue ;; esac
    m_oid="$(g rev-parse --verify --quiet "$M_tree:$new" || true)"
    l_oid="$(g rev-parse --verify --quiet "$ours:$new" || true)"
    if [ -z "$m_oid" ] || [ -z "$l_oid" ] || [ "$m_oid" = "$l_oid" ]; then continue; fi
    g cat-file -e "$M_tree:$old" 2>/dev/null && continue
    read -r _ mode _ <<<"${meta#:}"
    printf '%s %s\t%s\0%s %s\t%s\0' "$mode" "$m_oid" "$old" "$mode" "$l_oid" "$new" >>"$entries"
    pend_conflict "$old" "$old" "deleted here (moved to .trash/), edited on the remote: the edited note is restored"
  done < <(g diff-tree -r -z -M --diff-filter=R "$base" "$ours")
  [ -s "$entries" ] || return 0
  GIT_INDEX_FILE="$index" g read-tree "$M_tree"
  GIT_INDEX_FILE="$index" g update-index -z --index-info <"$entries"
  M_tree="$(GIT_INDEX_FILE="$index" g write-tree)"
}

# apply_live FROM_TREE TO_TREE: bring the live tree from one tree to the other, file by file, only
# where the live file still holds FROM's version. Sets live_ok=false when a file changed meanwhile.
apply_live() {
  local from="$1" to="$2" meta path old_mode new_mode old_oid new_oid status pass
  live_ok=true
  busy=()
  # Every file first, so a pass that cannot complete changes nothing (a writer that takes no lock).
  while IFS= read -r -d '' meta && IFS= read -r -d '' path; do
    read -r old_mode new_mode old_oid new_oid status <<<"${meta#:}"
    if ! live_is "$path" "$old_mode" "$old_oid"; then
      log "$path changed while syncing; it is merged in the next pass"
      busy+=("$path")
    fi
  done < <(g diff-tree -r -z --no-renames "$from" "$to")
  if [ ${#busy[@]} -gt 0 ]; then
    live_ok=false
    return 0
  fi
  for pass in add change delete; do
    while IFS= read -r -d '' meta && IFS= read -r -d '' path; do
      read -r old_mode new_mode old_oid new_oid status <<<"${meta#:}"
      case "$pass:$status" in
        add:A | change:M | change:T | delete:D) ;;
        *) continue ;;
      esac
      [ "$old_mode" = 160000 ] || [ "$new_mode" = 160000 ] && continue
      put "$path" "$new_mode" "$new_oid" "$old_mode" "$old_oid"
      if ! $put_ok; then
        log "$path changed while syncing; it is merged in the next pass"
        live_ok=false
      fi
    done < <(g diff-tree -r -z --no-renames "$from" "$to")
  done
}

# mode_in TREE PATH: the mode of PATH in TREE (empty when absent).
mode_in() {
  local line
  line="$(g ls-tree "$1" -- "$2")"
  printf '%s\n' "${line%% *}"
}

# swap_busy: for the files in `busy` (written here again and again during the sync by a writer that
# takes no lock), this device's version stays at the path and the merged (remote) version is saved
# beside it, so the round can complete without replacing a file under that writer.
swap_busy() {
  local index="$tmpdir/swap-index" entries="$tmpdir/swap-entries" path l_oid m_oid copy i
  local -a kept=()
  GIT_INDEX_FILE="$index" g read-tree "$M_tree"
  : >"$entries"
  for path in "${busy[@]}"; do
    l_oid="$(g rev-parse --verify --quiet "$L_tree:$path" || true)"
    m_oid="$(g rev-parse --verify --quiet "$M_tree:$path" || true)"
    if [ -n "$l_oid" ]; then
      printf '%s %s\t%s\0' "$(mode_in "$L_tree" "$path")" "$l_oid" "$path" >>"$entries"
    else
      printf '0 %s\t%s\0' "$zero" "$path" >>"$entries"
    fi
    # The merge's copy of this device's version is no longer needed: that version stays at the path.
    kept=()
    for ((i = 0; i < ${#pending[@]}; i += 3)); do
      if [ "${pending[i]}" = "$path" ] && [ "${pending[i + 1]}" != "$path" ]; then
        printf '0 %s\t%s\0' "$zero" "${pending[i + 1]}" >>"$entries"
      else
        kept+=("${pending[i]}" "${pending[i + 1]}" "${pending[i + 2]}")
      fi
    done
    pending=("${kept[@]}")
    if [ -n "$m_oid" ] && [ "$m_oid" != "$l_oid" ]; then
      copy="$(conflict_copy "$path" "$m_oid" "$M_tree")"
      printf '%s %s\t%s\0' "$(mode_in "$M_tree" "$path")" "$m_oid" "$copy" >>"$entries"
      pend_conflict "$path" "$copy" "kept changing here during the sync (a writer without the lock): this device's version stays at the path, the remote's beside it"
    fi
  done
  GIT_INDEX_FILE="$index" g update-index -z --index-info <"$entries"
  M_tree="$(GIT_INDEX_FILE="$index" g write-tree)"
}

# make_p: the commit to push for M_tree: the remote tip itself, HEAD when it already is that
# commit, else a new commit whose only parent is the remote tip.
make_p() {
  local parents
  if [ "$M_tree" = "$R_tree" ]; then
    P="$R"
  else
    parents="$(g rev-list --parents -n 1 "$L")"
    if [ "$parents" = "$L $R" ] && [ "$L_tree" = "$M_tree" ]; then
      P="$L"
    else
      P="$(g commit-tree "$M_tree" -p "$R" -m "Quire sync from $host at $(now)")"
    fi
  fi
}

# One pass of snapshot, merge and live update, under Quire's lock. Sets P (the commit to push, or
# empty), and integrated=false when a file changed under it (the caller runs another pass).
integrate() {
  local S base base_tree
  P=""
  integrated=false
  pending=()
  lock_vault
  if [ -z "$(g rev-parse --verify --quiet HEAD || true)" ] && [ -n "$R" ]; then
    adopt
    if ! $adopt_ok; then
      unlock_vault
      return 0
    fi
  fi
  snapshot
  if [ -z "$R" ]; then
    unlock_vault
    P="$L"
    integrated=true
    return 0
  fi
  S="$(g rev-parse --verify --quiet "refs/quire/synced^{commit}" || true)"
  if [ -n "$S" ]; then
    base="$S"
    if ! g merge-base --is-ancestor "$S" "$R"; then
      g update-ref "refs/quire/before-force-push/$(date -u +%Y%m%dT%H%M%SZ)" "$L"
      log "the remote history was rewritten (a force-push): its changes since the last sync are applied here, local changes are kept on top, and the commits it removed are not pushed back (the old local history stays under refs/quire/before-force-push/)"
    fi
  else
    base="$(g merge-base "$L" "$R" || true)"
    [ -n "$base" ] || fail 2 "$VAULT and $REMOTE have unrelated histories; refusing to merge them. Move the vault's .git away to adopt $REMOTE afresh (local files are kept as conflict copies)."
  fi
  L_tree="$(g rev-parse "$L^{tree}")"
  R_tree="$(g rev-parse "$R^{tree}")"
  base_tree="$(g rev-parse "$base^{tree}")"
  if [ "$L_tree" = "$base_tree" ]; then
    M_tree="$R_tree"
  elif [ "$R_tree" = "$base_tree" ]; then
    M_tree="$L_tree"
  else
    merge_trees "$base" "$L" "$R"
    restore_trashed "$base" "$L"
  fi
  make_p
  if [ "$M_tree" != "$L_tree" ]; then
    if ! first-sync-guard git "$VAULT" "$L_tree" "$M_tree" 2>"$tmpdir/guard"; then
      cat "$tmpdir/guard" >&2
      fail 2 "changes from $REMOTE: $(<"$tmpdir/guard")"
    fi
    apply_live "$L_tree" "$M_tree"
    if ! $live_ok && [ "$attempt" -ge 3 ]; then
      swap_busy
      make_p
      apply_live "$L_tree" "$M_tree"
    fi
    if ! $live_ok; then
      unlock_vault
      return 0
    fi
    remote_changes=1
    sync -f . 2>/dev/null || sync
  fi
  g update-ref "refs/heads/$BRANCH" "$P" "$L"
  g read-tree -m "$L" "$P" 2>/dev/null || g read-tree "$P"
  g update-ref refs/quire/synced "$R"
  unlock_vault
  flush_conflicts
  integrated=true
}

# Sets push_rc: 0 when pushed (or nothing to push), 3 when the remote moved meanwhile.
push() {
  local out
  push_rc=0
  if [ -z "$P" ] || [ "$P" = "$R" ]; then return 0; fi
  if out="$(net push --porcelain origin "$P:refs/heads/$BRANCH" 2>&1)"; then
    g update-ref "refs/remotes/origin/$BRANCH" "$P"
    g update-ref refs/quire/synced "$P"
    pushed=1
    return 0
  fi
  if [[ $out == *"(fetch first)"* || $out == *"(non-fast-forward)"* || $out == *"stale info"* ||
    $out == *"failed to update ref"* || $out == *"cannot lock ref"* ]]; then
    push_rc=3
    return 0
  fi
  fail 1 "could not push to $REMOTE (the next round builds a fresh commit from the vault as it is then): ${out:-timed out after ${net_timeout}s}"
}

round() {
  set -euo pipefail
  trap 'finish $?' EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
  trap 'exit 129' HUP
  tmpdir=""
  conflicts=0 wrote=0 local_changes=0 remote_changes=0 pushed=0
  [ -d "$VAULT" ] || fail 2 "the vault $VAULT does not exist (a missing mount?); nothing was synced"
  cd "$VAULT"
  exec {run_fd}<.
  flock -w "$lock_wait" "$run_fd" || fail 1 "another round of the sync still runs on $VAULT"
  if [ -n "$lock_file" ]; then
    mkdir -p -- "$(dirname -- "$lock_file")"
    exec {lock_fd}>>"$lock_file"
  fi
  tmpdir="$(mktemp -d)"
  setup_repository
  clean_leftovers
  local attempt=0
  fetch
  while :; do
    attempt=$((attempt + 1))
    [ "$attempt" -le 8 ] || fail 1 "the vault or the remote kept changing during the sync; the next round retries"
    integrate
    $integrated || continue
    push
    [ "$push_rc" -eq 0 ] && break
    log "the remote moved while syncing; fetching again"
    fetch
  done
  write_marker
  # Housekeeping in the foreground (never detached: it would outlive the round and its locks).
  g -c gc.auto=6700 -c gc.autoDetach=false gc --auto --quiet || log "git gc failed (harmless; retried next round)"
  message="synced with $REMOTE at $(now)"
  [ "$local_changes" -eq 0 ] || message+="; local changes committed"
  [ "$pushed" -eq 0 ] || message+=" and pushed"
  [ "$remote_changes" -eq 0 ] || message+="; $wrote files updated from the remote"
  [ "$conflicts" -eq 0 ] || message+="; $conflicts conflicts (see conflicts)"
  log "$message"
}

if $first && [ -e "$marker" ]; then
  log "first sync already done ($marker)"
  exit 0
fi
attempts=0
while :; do
  attempts=$((attempts + 1))
  set +e
  (round)
  rc=$?
  set -e
  if [ "$rc" -eq 0 ] || ! $first || [ "$rc" -eq 2 ]; then exit "$rc"; fi
  if [ "$first_attempts" -gt 0 ] && [ "$attempts" -ge "$first_attempts" ]; then exit "$rc"; fi
  log "first sync: attempt $attempts failed; retrying in ${retry_seconds}s"
  sleep "$retry_seconds"
done
