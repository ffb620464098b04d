#pragma once
// Formats told by their content where they resemble another: RABIT's "[0]" looks like JSON,
// GOAL's XML like JFLAP's, so these are sniffed before the first-character rules. Formats krc
// does not read are refused by name ("this is a file of numbers only, as Abbadingo's training
// sets ..., which krc does not read (yet)") instead of with the parse error of the format they
// happen to resemble.
#include <optional>
#include <string>

namespace krc::frontend {

// What the text is ("a file of numbers only, as Abbadingo's ..."), or nullopt when it is none of
// them.
std::optional<std::string> foreign_format(const std::string& text);

// "adl" (Stamina), "ba" (RABIT), "gff" (GOAL), "taf" (AutomataLib), "fsm" (mCRL2, LTSmin),
// "vtf" (mata) or "etf" (LTSmin) when the text's first lines are one of these formats krc reads,
// else "".
std::string sniff_read_format(const std::string& text);

// "this is FORMAT, which krc does not read (yet); krc reads ...".
std::string foreign_format_problem(const std::string& format);

}  // namespace krc::frontend
