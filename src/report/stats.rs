//! Statistics across repetitions.
