#pragma once
// Internal header. Alphabets of valuations, shared by the HOA reader and DOT's guards: letter v
// sets proposition j when bit j of v is set (HOA's implicit-label order), and is named by its
// literals in proposition order, "a&!b" ("t" when there are no propositions).
#include <cstdint>
#include <string>
#include <vector>

namespace krc::frontend {

// Bit v of a table is a formula's value under valuation v.
using TruthTable = std::vector<std::uint64_t>;

// Valuation v as a letter: "a&!b". A proposition whose name is not a plain identifier is
// quoted as HOA quotes it ("\"x y\"&!b").
std::string valuation_letter(std::uint32_t v, const std::vector<std::string>& propositions);

// Each proposition's truth table over the 2^count valuations, made once so that a formula of
// many atoms copies tables instead of looping over the valuations per atom.
std::vector<TruthTable> proposition_tables(std::size_t count);

// The table of a constant over 2^count valuations.
TruthTable constant_table(std::size_t count, bool value);

}  // namespace krc::frontend
