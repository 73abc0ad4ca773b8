//! `oauth.db`: registered clients, authorization codes, grants and refresh tokens.
//!
//! Unlike the index this is not derived: it is migrated forward with `PRAGMA user_version`, never
//! rebuilt. Codes and refresh tokens are stored only as keyed hashes (HMAC-SHA256 under a key
//! from the state directory), so a copy of the database alone cannot be replayed. Every method
//! blocks: call them off the async executor.

use std::path::Path;
use std::sync::Mutex;

use hmac::{Hmac, Mac};
use rusqlite::{Connection, OptionalExtension, params};
use sha2::Sha256;

/// The migrations, in order; `user_version` counts how many have run.
const MIGRATIONS: &[&str] = &[
    "CREATE TABLE clients (
        client_id TEXT PRIMARY KEY,
        client_name TEXT,
        redirect_uris TEXT NOT NULL,
        created INTEGER NOT NULL,
        last_used INTEGER NOT NULL
     );
     CREATE TABLE codes (
        code_hash BLOB PRIMARY KEY,
        client_id TEXT NOT NULL,
        identity TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        code_challenge TEXT NOT NULL,
        resource TEXT NOT NULL,
        expires INTEGER NOT NULL,
        grant_id TEXT
     );
     CREATE TABLE grants (
        grant_id TEXT PRIMARY KEY,
        client_id TEXT NOT NULL,
        identity TEXT NOT NULL,
        resource TEXT NOT NULL,
        created INTEGER NOT NULL,
        revoked INTEGER NOT NULL DEFAULT 0
     );
     CREATE TABLE refresh_tokens (
        token_hash BLOB PRIMARY KEY,
        grant_id TEXT NOT NULL REFERENCES grants(grant_id),
        expires INTEGER NOT NULL,
        used INTEGER NOT NULL DEFAULT 0
     );",
    // Each code and grant remembers a keyed fingerprint of the identity token it was consented
    // with, so changing or removing that token ends the grant. Grants from before this migration
    // have none and are refused: they must be authorized again.
    "ALTER TABLE codes ADD COLUMN token_fingerprint BLOB;
     ALTER TABLE grants ADD COLUMN token_fingerprint BLOB;",
];

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("oauth.db: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("oauth.db was written by a newer Quire (schema {found}, this one knows {known})")]
    TooNew { found: i64, known: usize },
}

/// A registered client.
#[derive(Debug, Clone)]
pub struct Client {
    pub client_id: String,
    pub client_name: Option<String>,
    pub redirect_uris: Vec<String>,
    /// For a Client ID Metadata Document client, the host that vouches for it (shown on the
    /// consent page); never stored, as those clients are fetched, not registered.
    pub document_host: Option<String>,
}

/// What an authorization code was issued for.
#[derive(Debug, Clone)]
pub struct CodeGrant {
    pub client_id: String,
    pub identity: String,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub resource: String,
    pub expires: i64,
    /// The keyed fingerprint of the identity token pasted on the consent page.
    pub token_fingerprint: Vec<u8>,
}

/// What redeeming a code found.
#[derive(Debug)]
pub enum Redeemed {
    Fresh(CodeGrant),
    /// The code was redeemed before; the grant it produced has now been revoked.
    Replayed,
    Unknown,
}

/// What a refresh token belongs to.
#[derive(Debug, Clone)]
pub struct GrantInfo {
    pub grant_id: String,
    pub client_id: String,
    pub identity: String,
    pub resource: String,
    /// The fingerprint of the token the grant was consented with; empty for grants made before
    /// fingerprints were kept, which match no token.
    pub token_fingerprint: Vec<u8>,
}

#[derive(Debug)]
pub enum Refreshed {
    Valid(GrantInfo),
    /// A token that was already used: the whole grant is revoked.
    Reused,
    Unknown,
}

/// One grant as `quire oauth list` shows it.
#[derive(Debug, Clone)]
pub struct GrantRow {
    pub grant_id: String,
    pub client_id: String,
    pub client_name: Option<String>,
    pub identity: String,
    pub created: i64,
    pub revoked: bool,
    pub token_fingerprint: Vec<u8>,
}

/// What a registration did.
#[derive(Debug, PartialEq, Eq)]
pub enum Registered {
    Saved,
    /// The table is at its cap and holds no abandoned registration to make room.
    Full,
}

pub struct Store {
    connection: Mutex<Connection>,
    hash_key: Vec<u8>,
}

impl Store {
    pub fn open(path: &Path, hash_key: Vec<u8>) -> Result<Store, StoreError> {
        let connection = Connection::open(path)?;
        connection.pragma_update(None, "journal_mode", "WAL")?;
        connection.pragma_update(None, "foreign_keys", true)?;
        let version: i64 = connection.pragma_query_value(None, "user_version", |row| row.get(0))?;
        if version > MIGRATIONS.len() as i64 {
            return Err(StoreError::TooNew {
                found: version,
                known: MIGRATIONS.len(),
            });
        }
        for (index, migration) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
            let transaction = connection.unchecked_transaction()?;
            transaction.execute_batch(migration)?;
            transaction.pragma_update(None, "user_version", (index + 1) as i64)?;
            transaction.commit()?;
        }
        Ok(Store {
            connection: Mutex::new(connection),
            hash_key,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.connection.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The keyed hash a secret is stored and looked up by.
    pub fn hash(&self, secret: &str) -> Vec<u8> {
        // HMAC accepts keys of any length, so this cannot fail; fall back to an empty tag anyway.
        match <Hmac<Sha256> as Mac>::new_from_slice(&self.hash_key) {
            Ok(mut mac) => {
                mac.update(secret.as_bytes());
                mac.finalize().into_bytes().to_vec()
            }
            Err(_) => Vec::new(),
        }
    }

    /// Registers `client` unless the table already holds `cap` registrations. When it is full,
    /// the oldest registration that never produced a grant and was made before `evictable_before`
    /// makes room (a flood of registrations can then displace only abandoned ones, never a
    /// client in use or one whose owner is on the consent page right now); with none such, the
    /// registration is refused (`Registered::Full`).
    pub fn register(
        &self,
        client: &Client,
        now: i64,
        cap: usize,
        evictable_before: i64,
    ) -> Result<Registered, StoreError> {
        let uris = serde_json::Value::from(client.redirect_uris.clone()).to_string();
        let connection = self.lock();
        let transaction = connection.unchecked_transaction()?;
        let count: i64 =
            transaction.query_row("SELECT COUNT(*) FROM clients", [], |row| row.get(0))?;
        if usize::try_from(count).unwrap_or(usize::MAX) >= cap {
            let evicted = transaction.execute(
                "DELETE FROM clients WHERE client_id = (
                   SELECT client_id FROM clients
                    WHERE created < ?1 AND client_id NOT IN (SELECT client_id FROM grants)
                    ORDER BY created LIMIT 1)",
                [evictable_before],
            )?;
            if evicted == 0 {
                return Ok(Registered::Full);
            }
        }
        transaction.execute(
            "INSERT INTO clients (client_id, client_name, redirect_uris, created, last_used) VALUES (?, ?, ?, ?, ?)",
            params![client.client_id, client.client_name, uris, now, now],
        )?;
        transaction.commit()?;
        Ok(Registered::Saved)
    }

    /// How many registrations the table holds.
    #[cfg(test)]
    pub fn client_count(&self) -> Result<usize, StoreError> {
        let count: i64 = self
            .lock()
            .query_row("SELECT COUNT(*) FROM clients", [], |row| row.get(0))?;
        Ok(usize::try_from(count).unwrap_or(0))
    }

    pub fn client(&self, client_id: &str) -> Result<Option<Client>, StoreError> {
        let row = self
            .lock()
            .query_row(
                "SELECT client_name, redirect_uris FROM clients WHERE client_id = ?",
                [client_id],
                |row| Ok((row.get::<_, Option<String>>(0)?, row.get::<_, String>(1)?)),
            )
            .optional()?;
        Ok(row.map(|(client_name, uris)| Client {
            client_id: client_id.to_string(),
            client_name,
            redirect_uris: serde_json::from_str(&uris).unwrap_or_default(),
            document_host: None,
        }))
    }

    pub fn save_code(&self, code: &str, grant: &CodeGrant) -> Result<(), StoreError> {
        self.lock().execute(
            "INSERT INTO codes (code_hash, client_id, identity, redirect_uri, code_challenge, resource, expires, token_fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            params![
                self.hash(code),
                grant.client_id,
                grant.identity,
                grant.redirect_uri,
                grant.code_challenge,
                grant.resource,
                grant.expires,
                grant.token_fingerprint
            ],
        )?;
        Ok(())
    }

    /// Takes a code for one use. A second use revokes the grant the first produced (RFC 9700).
    pub fn redeem_code(&self, code: &str) -> Result<Redeemed, StoreError> {
        let connection = self.lock();
        let hash = self.hash(code);
        let row = connection
            .query_row(
                "SELECT client_id, identity, redirect_uri, code_challenge, resource, expires, grant_id, token_fingerprint FROM codes WHERE code_hash = ?",
                [&hash],
                |row| {
                    Ok((
                        CodeGrant {
                            client_id: row.get(0)?,
                            identity: row.get(1)?,
                            redirect_uri: row.get(2)?,
                            code_challenge: row.get(3)?,
                            resource: row.get(4)?,
                            expires: row.get(5)?,
                            token_fingerprint: row
                                .get::<_, Option<Vec<u8>>>(7)?
                                .unwrap_or_default(),
                        },
                        row.get::<_, Option<String>>(6)?,
                    ))
                },
            )
            .optional()?;
        match row {
            None => Ok(Redeemed::Unknown),
            Some((_, Some(grant_id))) => {
                connection.execute(
                    "UPDATE grants SET revoked = 1 WHERE grant_id = ?",
                    [&grant_id],
                )?;
                Ok(Redeemed::Replayed)
            }
            Some((grant, None)) => {
                // Marked as spent before anything else can happen, so a concurrent second
                // redemption sees it as replayed.
                connection.execute(
                    "UPDATE codes SET grant_id = '' WHERE code_hash = ?",
                    [&hash],
                )?;
                Ok(Redeemed::Fresh(grant))
            }
        }
    }

    /// Creates the grant a redeemed code produced, with its first refresh token.
    pub fn create_grant(
        &self,
        code: &str,
        grant: &GrantInfo,
        refresh_token: &str,
        refresh_expires: i64,
        now: i64,
    ) -> Result<(), StoreError> {
        let connection = self.lock();
        let transaction = connection.unchecked_transaction()?;
        transaction.execute(
            "INSERT INTO grants (grant_id, client_id, identity, resource, created, token_fingerprint) VALUES (?, ?, ?, ?, ?, ?)",
            params![grant.grant_id, grant.client_id, grant.identity, grant.resource, now, grant.token_fingerprint],
        )?;
        transaction.execute(
            "UPDATE codes SET grant_id = ? WHERE code_hash = ?",
            params![grant.grant_id, self.hash(code)],
        )?;
        transaction.execute(
            "INSERT INTO refresh_tokens (token_hash, grant_id, expires) VALUES (?, ?, ?)",
            params![self.hash(refresh_token), grant.grant_id, refresh_expires],
        )?;
        transaction.execute(
            "UPDATE clients SET last_used = ? WHERE client_id = ?",
            params![now, grant.client_id],
        )?;
        transaction.commit()?;
        Ok(())
    }

    /// Uses a refresh token once, replacing it with `next`. Reuse of a spent token revokes the
    /// whole grant, because one of the two holders is not the client it was issued to.
    pub fn rotate_refresh(
        &self,
        token: &str,
        client_id: &str,
        next: &str,
        next_expires: i64,
        now: i64,
    ) -> Result<Refreshed, StoreError> {
        let connection = self.lock();
        let hash = self.hash(token);
        let row = connection
            .query_row(
                "SELECT r.grant_id, r.used, r.expires, g.client_id, g.identity, g.resource, g.revoked, g.token_fingerprint
                 FROM refresh_tokens r JOIN grants g ON g.grant_id = r.grant_id WHERE r.token_hash = ?",
                [&hash],
                |row| {
                    Ok((
                        GrantInfo {
                            grant_id: row.get(0)?,
                            client_id: row.get(3)?,
                            identity: row.get(4)?,
                            resource: row.get(5)?,
                            token_fingerprint: row
                                .get::<_, Option<Vec<u8>>>(7)?
                                .unwrap_or_default(),
                        },
                        row.get::<_, bool>(1)?,
                        row.get::<_, i64>(2)?,
                        row.get::<_, bool>(6)?,
                    ))
                },
            )
            .optional()?;
        let Some((grant, used, expires, revoked)) = row else {
            return Ok(Refreshed::Unknown);
        };
        if used {
            connection.execute(
                "UPDATE grants SET revoked = 1 WHERE grant_id = ?",
                [&grant.grant_id],
            )?;
            return Ok(Refreshed::Reused);
        }
        if revoked || expires < now || grant.client_id != client_id {
            return Ok(Refreshed::Unknown);
        }
        let transaction = connection.unchecked_transaction()?;
        transaction.execute(
            "UPDATE refresh_tokens SET used = 1 WHERE token_hash = ?",
            [&hash],
        )?;
        transaction.execute(
            "INSERT INTO refresh_tokens (token_hash, grant_id, expires) VALUES (?, ?, ?)",
            params![self.hash(next), grant.grant_id, next_expires],
        )?;
        transaction.execute(
            "UPDATE clients SET last_used = ? WHERE client_id = ?",
            params![now, grant.client_id],
        )?;
        transaction.commit()?;
        Ok(Refreshed::Valid(grant))
    }

    /// Revokes the grant a refresh token belongs to; unknown tokens are ignored (RFC 7009).
    pub fn revoke_by_refresh(&self, token: &str) -> Result<(), StoreError> {
        self.lock().execute(
            "UPDATE grants SET revoked = 1 WHERE grant_id = (SELECT grant_id FROM refresh_tokens WHERE token_hash = ?)",
            [self.hash(token)],
        )?;
        Ok(())
    }

    pub fn revoke_grant(&self, grant_id: &str) -> Result<(), StoreError> {
        self.lock().execute(
            "UPDATE grants SET revoked = 1 WHERE grant_id = ?",
            [grant_id],
        )?;
        Ok(())
    }

    /// The token fingerprint of a grant that is not revoked; `None` for a revoked or unknown
    /// grant, an empty one for a grant made before fingerprints were kept.
    pub fn live_grant_fingerprint(&self, grant_id: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let row: Option<(bool, Option<Vec<u8>>)> = self
            .lock()
            .query_row(
                "SELECT revoked, token_fingerprint FROM grants WHERE grant_id = ?",
                [grant_id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?;
        Ok(match row {
            Some((false, fingerprint)) => Some(fingerprint.unwrap_or_default()),
            _ => None,
        })
    }

    /// Every grant with its client's name, newest first: what `quire oauth list` prints.
    pub fn grants(&self) -> Result<Vec<GrantRow>, StoreError> {
        let connection = self.lock();
        let mut statement = connection.prepare(
            "SELECT g.grant_id, g.client_id, c.client_name, g.identity, g.created, g.revoked, g.token_fingerprint
               FROM grants g LEFT JOIN clients c ON c.client_id = g.client_id
              ORDER BY g.created DESC, g.grant_id",
        )?;
        let rows = statement.query_map([], |row| {
            Ok(GrantRow {
                grant_id: row.get(0)?,
                client_id: row.get(1)?,
                client_name: row.get(2)?,
                identity: row.get(3)?,
                created: row.get(4)?,
                revoked: row.get(5)?,
                token_fingerprint: row.get::<_, Option<Vec<u8>>>(6)?.unwrap_or_default(),
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// Revokes every live grant of `identity` and/or `client_id` (both given: grants matching
    /// both). Returns how many were revoked.
    pub fn revoke_matching(
        &self,
        identity: Option<&str>,
        client_id: Option<&str>,
    ) -> Result<usize, StoreError> {
        Ok(self.lock().execute(
            "UPDATE grants SET revoked = 1
              WHERE revoked = 0 AND (?1 IS NULL OR identity = ?1) AND (?2 IS NULL OR client_id = ?2)",
            params![identity, client_id],
        )?)
    }

    /// Deletes expired codes and refresh tokens, clients unused since `stale_before` that hold no
    /// live grant, and clients registered before `never_used_before` that never produced a grant
    /// (a registration nobody completed). Returns how many clients were swept.
    pub fn sweep(
        &self,
        now: i64,
        stale_before: i64,
        never_used_before: i64,
    ) -> Result<usize, StoreError> {
        let connection = self.lock();
        connection.execute("DELETE FROM codes WHERE expires < ?", [now])?;
        connection.execute("DELETE FROM refresh_tokens WHERE expires < ?", [now])?;
        let stale = connection.execute(
            "DELETE FROM clients WHERE last_used < ?
               AND client_id NOT IN (SELECT g.client_id FROM grants g JOIN refresh_tokens r ON r.grant_id = g.grant_id WHERE g.revoked = 0 AND r.used = 0)",
            [stale_before],
        )?;
        let never_used = connection.execute(
            "DELETE FROM clients WHERE created < ? AND client_id NOT IN (SELECT client_id FROM grants)",
            [never_used_before],
        )?;
        Ok(stale + never_used)
    }
}
