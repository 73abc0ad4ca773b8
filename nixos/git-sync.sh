# One round of the git sync backend: commit what changed in the vault, pull (rebasing local
# commits), push. Run by the <unit>-sync.service timer as the vault's user.
# Environment: VAULT, REMOTE, BRANCH, AUTHOR_NAME, AUTHOR_EMAIL; GIT_SSH_COMMAND when a key is set.

cd "$VAULT"
git_() { git -c user.name="$AUTHOR_NAME" -c user.email="$AUTHOR_EMAIL" "$@"; }

if [ ! -d .git ]; then
  git_ init --quiet --initial-branch "$BRANCH"
  git_ remote add origin "$REMOTE"
fi
git_ remote set-url origin "$REMOTE"

git_ fetch --quiet origin
remote_has_branch=false
if git_ rev-parse --verify --quiet "refs/remotes/origin/$BRANCH" >/dev/null; then
  remote_has_branch=true
fi

# A vault without commits adopts the remote history: the index takes the remote tree, files
# missing here are checked out, and files that differ here become the next commit (never lost).
if ! git_ rev-parse --verify --quiet HEAD >/dev/null && $remote_has_branch; then
  git_ reset --quiet "origin/$BRANCH"
  git_ ls-files --deleted -z | xargs -0 -r git checkout --
fi

first-sync-guard git "$VAULT"

git_ add --all
if ! git_ diff --cached --quiet; then
  git_ commit --quiet -m "Quire sync from $(uname -n) at $(date -u +%Y-%m-%dT%H:%M:%SZ)"
fi

if $remote_has_branch; then
  if ! git_ rebase --quiet "origin/$BRANCH"; then
    git_ rebase --abort
    echo "git sync: local commits conflict with origin/$BRANCH; resolve in $VAULT by hand (nothing was pushed)" >&2
    exit 1
  fi
fi
if git_ rev-parse --verify --quiet HEAD >/dev/null; then
  git_ push --quiet origin "HEAD:$BRANCH"
fi
