# Deletion guard, shared by every sync backend (docs/SYNC.md). A sync must never turn "this
# device lost its notes" (a failed mount, a wiped disk, a wrong path, an interrupted download) into
# "delete those notes on every device". The guard compares what the sync state says the vault held
# with what it would hold now, counting only notes and attachments: paths with a component starting
# with "." (.obsidian/, .trash/, .git/, Quire's .quire-*.tmp files) are never counted.
#
# A change is refused when it deletes (or truncates to 0 bytes) D of the N counted files and
#   D = N (every note gone), or D >= QUIRE_SYNC_GUARD_MIN (default 5) and
#   D >= QUIRE_SYNC_GUARD_PERCENT (default 20) percent of N.
# A file whose content still exists at another path (a move, or a delete into .trash/) is not
# counted as deleted. The owner lets one refused change through by creating the override file
# QUIRE_SYNC_GUARD_OVERRIDE (default $STATE_DIRECTORY/allow-mass-deletion, i.e.
# /var/lib/<unit>-sync/allow-mass-deletion under the NixOS module); it is removed once used.
#
# Usage: first-sync-guard git VAULT [FROM TO]   FROM and TO are git tree-ishes; without them FROM is
#                                               HEAD and TO what `git add --all` would commit now
#        first-sync-guard obsidian VAULT OBSIDIAN_CONFIG_DIR
# Exit status 0 allows the sync; 1 refuses it with the reason on stderr (the journal); 2 is a
# usage error.
set -euo pipefail

mode="${1:-}"
vault="${2:-}"
if [ -z "$mode" ] || [ -z "$vault" ]; then
  echo "usage: first-sync-guard git VAULT [FROM TO] | first-sync-guard obsidian VAULT CONFIG_DIR" >&2
  exit 2
fi
percent="${QUIRE_SYNC_GUARD_PERCENT:-20}"
obsidian_config="${3:-$vault}"
min_files="${QUIRE_SYNC_GUARD_MIN:-5}"

override_file() {
  if [ -n "${QUIRE_SYNC_GUARD_OVERRIDE:-}" ]; then
    printf '%s\n' "$QUIRE_SYNC_GUARD_OVERRIDE"
  elif [ -n "${STATE_DIRECTORY:-}" ]; then
    # systemd may list several state directories, separated by ":"; the first is the unit's own.
    printf '%s\n' "${STATE_DIRECTORY%%:*}/allow-mass-deletion"
  elif [ "$mode" = git ]; then
    printf '%s\n' "$vault/.git/quire-allow-mass-deletion"
  else
    printf '%s\n' "$obsidian_config/allow-mass-deletion"
  fi
}

# A counted path: no component starts with "." (relative paths, so a vault under a dot-path such
# as /srv/.notes is judged by its own contents only).
counted() {
  case "/$1" in
    */.*) return 1 ;;
    *) return 0 ;;
  esac
}

# judge WHAT N D: refuse (exit 1) or allow (return) D deletions among N counted files.
judge() {
  local what="$1" total="$2" gone="$3" override
  if [ "$gone" -eq 0 ]; then
    return 0
  fi
  if [ "$gone" -lt "$total" ] &&
    { [ "$gone" -lt "$min_files" ] || [ $((gone * 100)) -lt $((total * percent)) ]; }; then
    return 0
  fi
  override="$(override_file)"
  if [ -e "$override" ]; then
    echo "first-sync guard: allowing $what to delete or empty $gone of $total notes and attachments because $override exists (now removed; it allows one sync)." >&2
    rm -f -- "$override"
    return 0
  fi
  echo "first-sync guard: refusing to sync: $what would delete or empty $gone of $total notes and attachments in $vault." >&2
  echo "Syncing now could delete those files on every other device (a failed mount, a wiped disk or an interrupted download looks the same as deleting them)." >&2
  echo "If the vault should not have lost them, restore it (or fix its mount); the next sync then proceeds." >&2
  echo "If the deletions are intended, create the file $override (touch it as the sync's user or root); the next sync is then allowed once." >&2
  exit 1
}

git_mode() {
  local from="${1:-HEAD}" to="${2:-}" tmp_index line meta path oid old_oid new_oid status total=0 gone=0 empty real
  local -A kept=()
  local -a deleted=()
  [ -d "$vault/.git" ] || exit 0
  real="$(cd "$vault" && pwd -P)"
  git_() { git -c safe.directory="$vault" -c safe.directory="$real" -C "$vault" "$@"; }
  git_ rev-parse --verify --quiet "$from^{tree}" >/dev/null || exit 0
  if [ -z "$to" ]; then
    # What `git add --all` would commit now, built in a throw-away index.
    tmp_index="$(mktemp)"
    trap 'rm -f "$tmp_index"' EXIT
    if [ -f "$vault/.git/index" ]; then cp "$vault/.git/index" "$tmp_index"; else rm -f "$tmp_index"; fi
    GIT_INDEX_FILE="$tmp_index" git_ add --all --ignore-errors >/dev/null 2>&1 || true
    to="$(GIT_INDEX_FILE="$tmp_index" git_ write-tree)"
  fi
  empty="$(git_ hash-object -t blob --stdin </dev/null)"
  # ":oldmode newmode oldoid newoid status" NUL path NUL; deletions and truncations to 0 bytes.
  while IFS= read -r -d '' meta && IFS= read -r -d '' path; do
    counted "$path" || continue
    read -r _ _ old_oid new_oid status <<<"${meta#:}"
    case "$status" in
      D) deleted+=("$old_oid") ;;
      M | T) if [ "$new_oid" = "$empty" ] && [ "$old_oid" != "$empty" ]; then gone=$((gone + 1)); fi ;;
    esac
  done < <(git_ diff-tree -r -z --no-renames "$from" "$to")
  [ $((gone + ${#deleted[@]})) -gt 0 ] || exit 0
  if [ ${#deleted[@]} -gt 0 ]; then
    # Every blob of the new tree, hidden paths included: a note moved (or into .trash/) is kept.
    while IFS= read -r -d '' line; do
      meta="${line%%$'\t'*}"
      oid="${meta##* }"
      kept[$oid]=1
    done < <(git_ ls-tree -r -z "$to")
    for oid in "${deleted[@]}"; do
      [ -n "${kept[$oid]:-}" ] || gone=$((gone + 1))
    done
  fi
  [ "$gone" -gt 0 ] || exit 0
  while IFS= read -r -d '' path; do
    counted "$path" && total=$((total + 1))
  done < <(git_ ls-tree -r -z --name-only "$from")
  judge "this git sync" "$total" "$gone"
}

obsidian_mode() {
  local config_dir="$1" db listed=0 count path paths total=0 gone=0 have_paths=true
  local -a dbs=()
  for db in "$config_dir"/obsidian-headless/sync/*/state.db; do
    [ -e "$db" ] && dbs+=("$db")
  done
  [ ${#dbs[@]} -gt 0 ] || exit 0
  for db in "${dbs[@]}"; do
    count="$(sqlite3 -readonly "$db" 'SELECT count(*) FROM local_files;')"
    listed=$((listed + count))
    # Per-file check when the state lists paths; older or unknown schemas fall back to the count.
    if paths="$(sqlite3 -readonly "$db" 'SELECT path FROM local_files;' 2>/dev/null)"; then
      while IFS= read -r path; do
        if [ -z "$path" ] || ! counted "$path"; then continue; fi
        total=$((total + 1))
        [ -s "$vault/$path" ] || gone=$((gone + 1))
      done <<<"$paths"
    else
      have_paths=false
    fi
  done
  if ! $have_paths; then
    # Notes and attachments on disk, relative to the vault (hidden folders and files skipped).
    if [ -n "$(cd "$vault" && find . -mindepth 1 -name '.*' -prune -o -type f -print -quit 2>/dev/null)" ]; then
      exit 0
    fi
    total="$listed"
    gone="$listed"
  fi
  judge "Obsidian Sync (state in $config_dir/obsidian-headless/sync/)" "$total" "$gone"
}

if [ ! -d "$vault" ]; then
  echo "first-sync guard: refusing to sync: the vault $vault does not exist (a missing mount?)." >&2
  exit 1
fi
case "$mode" in
  git) git_mode "${3:-}" "${4:-}" ;;
  obsidian) obsidian_mode "${3:?first-sync-guard obsidian VAULT CONFIG_DIR}" ;;
  *)
    echo "first-sync guard: unknown mode $mode (use git or obsidian)" >&2
    exit 2
    ;;
esac
