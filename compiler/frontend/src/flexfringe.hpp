#pragma once
// Internal header. What a missing transition of a FlexFringe model means, for the DOT reader
// (PAutomaC labels) and the JSON reader (FlexFringe's JSON output): FlexFringe writes only the
// transitions its training traces took, so a model with no accepting states is still completed
// unasked (AutomatonBuilder::set_missing_meaning), with this in the note.
namespace krc::frontend {

inline constexpr const char* kFlexFringeMissing =
    "reads a symbol that no training trace read from that state (FlexFringe writes only the "
    "transitions its traces took)";

}  // namespace krc::frontend
