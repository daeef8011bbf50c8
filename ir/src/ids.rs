//! Typed indices into the tables of a [`Contract`](crate::Contract).
//!
//! Every id is a `u32` newtype so that an `ExprId` can never be used where a
//! `RuleId` is meant. Ids are dense, start at zero and are stable: they are
//! the positions written into a bundle.

macro_rules! define_id {
    ($(#[$doc:meta] $name:ident),* $(,)?) => {$(
        #[$doc]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
        pub struct $name(pub u32);

        impl $name {
            /// The id as an index into its table.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }

            /// The id of the entry at `index`.
            ///
            /// # Panics
            /// When `index` does not fit in a `u32`; tables are bounded far
            /// below that by the compiler and the bundle loader.
            #[inline]
            pub fn from_index(index: usize) -> Self {
                Self(u32::try_from(index).expect("id fits in u32"))
            }
        }
    )*};
}

define_id! {
    /// A type in the contract's [`TypeTable`](crate::TypeTable).
    TypeId,
    /// An expression node in the contract's expression arena.
    ExprId,
    /// A `let` value.
    LetId,
    /// A rule, in file order.
    RuleId,
    /// A reference table.
    TableId,
    /// A declared effect.
    EffectId,
    /// A declared channel.
    ChannelId,
    /// A declared component.
    ComponentId,
    /// A declared `extern` host function.
    ExternId,
    /// A regular expression used by `matches`.
    RegexId,
    /// A lambda parameter: one slot per lambda in the contract.
    LocalId,
    /// A declared window (`windows:`).
    WindowId,
    /// A declared model (`models:`).
    ModelId,
}
