//! Claims: numeric tables found in patch mails.
