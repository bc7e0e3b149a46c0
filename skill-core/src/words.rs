//! The words of the manifest's closed vocabularies (`status = "deprecated"`,
//! `autonomy = "L2"`, `effect = "database"`, ...), declared once per enum.
//!
//! Each vocabulary is one `words!` declaration: the enum, its words, and the
//! three things everyone needs from them: `as_str` (what manifests and exported
//! JSON write), `parse` (what a registry file or a caller sends), and `WORDS`,
//! the (word, Rust variant) pairs `#[skill]` offers and expands from. With the
//! `serde` feature the enum reads and writes its words.

/// A vocabulary: the word a value is written as, and every value.
pub trait Word: Copy + 'static {
    /// Every value, in declaration order.
    const ALL: &'static [Self];
    /// (word, Rust variant name) for each value, in declaration order.
    const WORDS: &'static [(&'static str, &'static str)];
    /// The word, as manifests and exported JSON write it.
    fn word(self) -> &'static str;
}

/// The value written as `word`, if there is one.
pub fn parse<W: Word>(word: &str) -> Option<W> {
    W::ALL.iter().copied().find(|w| w.word() == word)
}

/// Declares a vocabulary enum: `Variant = "word"` per value.
macro_rules! words {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $word:literal, )+
        }
    ) => {
        $(#[$meta])*
        pub enum $name {
            $(
                $(#[$vmeta])*
                #[doc = ::core::concat!("\n\nWritten `", $word, "`.")]
                $variant,
            )+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The word, as manifests and exported JSON write it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)+
                }
            }

            /// The value written as `word`.
            pub fn parse(word: &str) -> ::core::option::Option<$name> {
                $crate::words::parse(word)
            }
        }

        impl $crate::words::Word for $name {
            const ALL: &'static [$name] = $name::ALL;
            const WORDS: &'static [(&'static str, &'static str)] =
                &[$(($word, ::core::stringify!($variant))),+];
            fn word(self) -> &'static str {
                self.as_str()
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        #[cfg(feature = "serde")]
        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::core::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        #[cfg(feature = "serde")]
        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::core::result::Result<$name, D::Error> {
                $crate::words::deserialize(d)
            }
        }
    };
}

/// Reads a word of vocabulary `W`; an unknown word is an error listing them all.
#[cfg(feature = "serde")]
pub fn deserialize<'de, W: Word, D: serde::Deserializer<'de>>(d: D) -> Result<W, D::Error> {
    struct Visit<W>(std::marker::PhantomData<W>);
    impl<W: Word> serde::de::Visitor<'_> for Visit<W> {
        type Value = W;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("one of ")?;
            f.write_str(&list::<W>())
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<W, E> {
            parse(v).ok_or_else(|| {
                E::custom(format!(
                    "unknown word `{v}`, expected one of {}",
                    list::<W>()
                ))
            })
        }
    }
    d.deserialize_str(Visit(std::marker::PhantomData))
}

/// `` `a`, `b`, `c` `` of vocabulary `W`.
pub fn list<W: Word>() -> String {
    W::WORDS
        .iter()
        .map(|(w, _)| format!("`{w}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::Word;
    use crate::manifest::{AgentRole, Autonomy, PermissionLevel};

    #[test]
    fn each_word_reads_back_as_its_value() {
        for &role in AgentRole::ALL {
            assert_eq!(AgentRole::parse(role.as_str()), Some(role));
        }
        assert_eq!(Autonomy::parse("L2"), Some(Autonomy::L2));
        assert_eq!(Autonomy::parse("l2"), None);
        assert_eq!(
            PermissionLevel::WORDS,
            &[("read", "Read"), ("execute", "Execute"), ("admin", "Admin")]
        );
        assert_eq!(
            super::list::<PermissionLevel>(),
            "`read`, `execute`, `admin`"
        );
    }
}
