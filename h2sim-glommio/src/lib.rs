//! Drives the h2sim protocol core over glommio.
