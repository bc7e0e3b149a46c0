//! Helpers for the workspace tests.
