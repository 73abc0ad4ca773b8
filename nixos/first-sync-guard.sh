# First-sync guard: refuses to start a two-way sync into an empty vault while the sync state still
# lists files. A vault that is empty when it should not be (a failed mount, a wiped disk, a wrong
# path) would otherwise look like "the user deleted every note", and the sync would delete them on
# every other device: a deletion storm. An empty vault with an empty sync state is a first sync and
# is allowed.
#
# Usage: first-sync-guard obsidian VAULT OBSIDIAN_CONFIG_DIR
#        first-sync-guard git VAULT
# Exit status 0 allows the sync; 1 refuses it with the reason on stderr (the journal).

mode="$1"
vault="$2"

# Notes and attachments, ignoring hidden folders (.obsidian, .trash, .git) and Quire's temp files.
vault_has_files() {
  [ -n "$(find "$vault" -mindepth 1 -path '*/.*' -prune -o -type f -print -quit 2>/dev/null)" ]
}

refuse() {
  echo "first-sync guard: refusing to sync: the vault $vault is empty, but $1 lists $2 files." >&2
  echo "Syncing now would delete those files on every other device." >&2
  echo "If the vault should not be empty, restore it (or fix its mount) and restart the sync." >&2
  echo "If you really want to start from an empty vault, $3, then restart the sync." >&2
  exit 1
}

case "$mode" in
  obsidian)
    config_dir="$3"
    vault_has_files && exit 0
    listed=0
    for db in "$config_dir"/obsidian-headless/sync/*/state.db; do
      [ -e "$db" ] || continue
      count="$(sqlite3 -readonly "$db" 'SELECT count(*) FROM local_files;')"
      listed=$((listed + count))
    done
    if [ "$listed" -gt 0 ]; then
      refuse "Obsidian Sync's state ($config_dir/obsidian-headless/sync/)" "$listed" \
        "delete that folder's state.db files (ob sync then downloads the remote vault)"
    fi
    ;;
  git)
    [ -d "$vault/.git" ] || exit 0
    tracked="$(git -C "$vault" ls-files | wc -l)"
    deleted="$(git -C "$vault" ls-files --deleted | wc -l)"
    if [ "$tracked" -gt 0 ] && [ "$deleted" -eq "$tracked" ]; then
      refuse "the git index" "$tracked" \
        "commit the deletions yourself (git -C $vault commit -a)"
    fi
    ;;
  *)
    echo "first-sync guard: unknown mode $mode (use obsidian or git)" >&2
    exit 2
    ;;
esac
