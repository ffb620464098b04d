// The attention picture: every head's pattern on one word, from a dense float64 pass whose
// weights are the runtime's (attention_weights.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "dot_parts.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/runtime/attention_weights.hpp"
#include "network_drawing.hpp"

namespace krc {

using namespace draw_detail;

namespace {

// One head's grid: query positions down, key positions across, white to dark blue by weight,
// each cell's exact weight in its tooltip.
void head_grid(std::ostream& out, const std::string& name, const AttentionHead& head,
               const Eigen::MatrixXd& w, const std::vector<std::string>& token) {
  const long long positions = static_cast<long long>(token.size());
  out << "    " << quoted(name) << " [shape=plaintext, style=\"\", label=<<TABLE BORDER=\"0\" "
      << "CELLBORDER=\"0\" CELLSPACING=\"1\" CELLPADDING=\"1\"><TR><TD COLSPAN=\"" << positions + 1
      << "\" BGCOLOR=\"" << colour_of(head.role) << "\"><B>" << name << "</B> "
      << html(describe(head.role)) << " (" << to_string(head.kind) << ")</TD></TR><TR><TD></TD>";
  for (long long j = 0; j < positions; ++j)
    out << "<TD><FONT POINT-SIZE=\"7\">" << token[j] << "</FONT></TD>";
  out << "</TR>";
  for (long long t = 0; t < positions; ++t) {
    out << "<TR><TD ALIGN=\"RIGHT\"><FONT POINT-SIZE=\"7\">" << token[t] << "</FONT></TD>";
    for (long long j = 0; j < positions; ++j) {
      const double v = j <= t ? std::clamp(w(t, j), 0.0, 1.0) : 0.0;
      // White to dark blue by weight; positions after the query are blank.
      const int r = static_cast<int>(std::lround(255 - v * (255 - 8)));
      const int g = static_cast<int>(std::lround(255 - v * (255 - 48)));
      const int b = static_cast<int>(std::lround(255 - v * (255 - 107)));
      char colour[8];
      std::snprintf(colour, sizeof colour, "#%02x%02x%02x", r, g, b);
      char title[96];
      std::snprintf(title, sizeof title, "%s q=%lld k=%lld w=%.17g", name.c_str(), t, j,
                    j <= t ? w(t, j) : 0.0);
      out << "<TD WIDTH=\"12\" HEIGHT=\"12\" FIXEDSIZE=\"TRUE\" BGCOLOR=\""
          << (j <= t ? colour : "#f4f4f4") << "\" ID=\"" << name << "_q" << t << "_k" << j
          << "\" TITLE=\"" << title << "\" HREF=\"#\"></TD>";
    }
    out << "</TR>";
  }
  out << "</TABLE>>];\n";
}

}  // namespace

std::vector<Eigen::MatrixXd> attention_patterns(const Network& net,
                                                const std::vector<LetterId>& word,
                                                std::vector<StateId>* states) {
  using Matrix = Eigen::MatrixXd;
  const int rows = static_cast<int>(word.size()) + 1;
  if (static_cast<int>(word.size()) > net.max_len)
    throw std::invalid_argument("the word is longer than the network's max_len");
  Matrix x(rows, net.d_model());
  for (int t = 0; t < rows; ++t) {
    const int token = t == 0 ? 0 : static_cast<int>(word[t - 1]) + 1;
    if (token >= net.token_embedding.rows())
      throw std::invalid_argument("a letter outside the network's vocabulary");
    x.row(t) = (net.token_embedding.row(token) + net.position_embedding.row(t)).cast<double>();
  }
  std::vector<Matrix> patterns;
  for (const Layer& layer : net.layers) {
    Matrix delta = Matrix::Zero(rows, net.d_model());
    for (const AttentionHead& head : layer.heads) {
      const Matrix q = x * head.query.cast<double>();
      const Matrix k = x * head.key.cast<double>();
      const Matrix v = x * head.value.cast<double>();
      Matrix p = attention_pattern(q, k, net.attention_scale, net.attention, head.kind);
      delta += Matrix(p * v) * head.output.cast<double>();
      patterns.push_back(std::move(p));
    }
    x += delta;
    if (layer.mlp) {
      const Mlp& mlp = *layer.mlp;
      Matrix hidden = x * mlp.in_weight.cast<double>().transpose();
      hidden.rowwise() += mlp.in_bias.cast<double>().transpose();
      hidden = hidden.cwiseMax(0.0);
      Matrix add = hidden * mlp.out_weight.cast<double>().transpose();
      add.rowwise() += mlp.out_bias.cast<double>().transpose();
      x += add;
    }
  }
  if (states) {
    const Matrix logits = x * net.unembedding.cast<double>();
    states->clear();
    for (int t = 0; t < rows; ++t) {
      Eigen::Index best = 0;
      logits.row(t).maxCoeff(&best);
      states->push_back(static_cast<StateId>(best));
    }
  }
  return patterns;
}

std::string attention_dot(const Network& net, const std::vector<LetterId>& word) {
  check_size(net);
  long long heads = 0;
  for (const auto& layer : net.layers) heads += static_cast<long long>(layer.heads.size());
  const long long positions = static_cast<long long>(word.size()) + 1;
  if (static_cast<int>(word.size()) > kMaxAttentionLetters ||
      heads * positions * positions > kMaxAttentionCells)
    throw LimitError("an attention picture of " + std::to_string(heads) + " heads on " +
                     std::to_string(word.size()) + " letters is too large (at most " +
                     std::to_string(kMaxAttentionLetters) + " letters and " +
                     std::to_string(kMaxAttentionCells) + " cells); draw a shorter word");
  // The pass keeps the weights sparse: its dense values are [positions, d_model or hidden].
  std::vector<StateId> states;
  const std::vector<Eigen::MatrixXd> patterns = attention_patterns(net, word, &states);
  std::vector<std::string> token{"&lt;bos&gt;"};
  for (LetterId l : word) token.push_back(html(net.vocabulary.at(l + 1)));
  std::string state_text;
  for (StateId s : states) state_text += (state_text.empty() ? "" : " ") + net.states.at(s);
  std::string word_text;
  for (LetterId l : word) word_text += (word_text.empty() ? "" : " ") + net.vocabulary.at(l + 1);

  std::ostringstream out;
  out << "digraph krc_attention {\n" << kGraphHeader;
  out << "  label="
      << quoted(title_of(net) + "\nattention (" + to_string(net.attention) + ", float64) on \"" +
                word_text + "\"; states after each prefix: " + state_text)
      << ";\n";
  out << "  " << legend_node(net, false);
  std::size_t p = 0;
  std::string previous;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const Layer& layer = net.layers[l];
    if (layer.heads.empty()) continue;
    const std::string L = std::to_string(l);
    out << "  subgraph cluster_layer" << L
        << " {\n    label=" << quoted("layer " + L + ": " + layer.purpose)
        << "; style=\"rounded\"; color=\"#999999\"; fontsize=10;\n";
    std::string first_here;
    for (std::size_t h = 0; h < layer.heads.size(); ++h, ++p) {
      const AttentionHead& head = layer.heads[h];
      const std::string name = "a" + L + ".h" + std::to_string(h);
      head_grid(out, name, head, patterns[p], token);
      if (first_here.empty()) first_here = name;
    }
    out << "  }\n";
    if (!previous.empty())
      out << "  " << quoted(previous) << " -> " << quoted(first_here) << " [style=invis];\n";
    previous = first_here;
  }
  out << "}\n";
  return out.str();
}

}  // namespace krc
