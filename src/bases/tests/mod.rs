//! Tests of the Bases language and views over an in-memory vault.
