//! Patches: read from mails and diffs, applied with git apply, or patch -F when allowed.
