//! The TypeScript side of the two records whose `Serialize` is written by hand (`ClineMessage`,
//! `ApiMessage`): their declarations are written by hand too (types/00-core.d.ts), and the
//! generated ones (crates/ts) refer to them by name.

use crate::{ApiMessage, ClineMessage};

macro_rules! declared_by_hand {
    ($($name:ident),*) => {$(
        impl ts_rs::TS for $name {
            type WithoutGenerics = Self;
            type OptionInnerType = Self;

            fn name(_: &ts_rs::Config) -> String {
                stringify!($name).to_owned()
            }

            fn inline(cfg: &ts_rs::Config) -> String {
                Self::name(cfg)
            }
        }
    )*};
}

declared_by_hand!(ApiMessage, ClineMessage);
