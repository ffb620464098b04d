// render_dot: the DOT text laid out by Graphviz's dot and rendered through libgvc, with names
// numbered in the order they are first seen so that the same text gives the same bytes.
#include <gvc.h>

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "krc/automata/input_error.hpp"
#include "krc/runtime/word_run.hpp"
#include "network_drawing.hpp"

namespace krc {

namespace {

// Graphviz's default ID discipline makes a named object's ID the address of its interned name,
// and orders subgraphs (the layer frames) by ID: the layout then depends on the heap's layout,
// so one graph drew differently in two processes. This discipline numbers names in the order
// they are first seen (even IDs; anonymous objects get odd ones, as by default), so the same
// DOT text gives the same bytes in every process, from both doors.
struct NameTable {
  std::map<std::string, IDTYPE> ids;
  std::vector<std::unique_ptr<std::string>> names;  // stable storage: print returns c_str()
  IDTYPE next_anonymous = 1;
};

Agiddisc_t sequential_ids = {
    [](Agraph_t*, Agdisc_t*) -> void* { return new NameTable; },
    [](void* state, int, char* name, IDTYPE* id, int create) -> long {
      auto& table = *static_cast<NameTable*>(state);
      if (!name) {
        *id = table.next_anonymous;
        table.next_anonymous += 2;
        return 1;
      }
      auto it = table.ids.find(name);
      if (it != table.ids.end()) {
        *id = it->second;
        return 1;
      }
      if (!create) {
        *id = 0;
        return 1;
      }
      table.names.push_back(std::make_unique<std::string>(name));
      *id = 2 * static_cast<IDTYPE>(table.names.size());
      table.ids.emplace(name, *id);
      return 1;
    },
    [](void*, int, IDTYPE) -> long { return 0; },
    [](void*, int, IDTYPE) {},
    [](void* state, int, IDTYPE id) -> char* {
      auto& table = *static_cast<NameTable*>(state);
      if (id % 2 != 0 || id == 0 || id / 2 > table.names.size()) return nullptr;
      return table.names[id / 2 - 1]->data();
    },
    [](void* state) { delete static_cast<NameTable*>(state); },
    [](void*, int, void*) {},
};

// The DOT text read a line at a time, as agmemread reads it (the lexer counts lines).
struct TextChannel {
  const std::string* text;
  std::size_t position = 0;
};

Agiodisc_t text_io = {[](void* chan, char* buffer, int size) -> int {
                        auto& c = *static_cast<TextChannel*>(chan);
                        int n = 0;
                        while (n + 1 < size && c.position < c.text->size()) {
                          const char ch = (*c.text)[c.position++];
                          buffer[n++] = ch;
                          if (ch == '\n') break;
                        }
                        return n;
                      },
                      AgIoDisc.putstr, AgIoDisc.flush};

// gvRenderData's length is an unsigned int* in Graphviz 2.x and a size_t* from 3.0 on.
template <class Length>
int render_data(int (*render)(GVC_t*, graph_t*, const char*, char**, Length*), GVC_t* gvc,
                graph_t* graph, const char* format, char** data, std::string& out) {
  Length length = 0;
  const int status = render(gvc, graph, format, data, &length);
  if (status == 0 && *data) out.assign(*data, length);
  return status;
}

// One Graphviz context for the process, made at the first picture and never freed. With one
// context per picture, the second picture in a process read freed memory (AddressSanitizer:
// heap-use-after-free in textspan_size, Graphviz 2.42): the pango plugin's text layout compares
// against the font name it saw last, which the previous context had freed with itself. A kept
// context also spares gvContext's plugin lists, which gvFreeContext does not free.
GVC_t* graphviz_context() {
  static GVC_t* const gvc = gvContext();
  return gvc;
}
std::mutex graphviz_mutex;

}  // namespace

std::string render_dot(const std::string& dot, DrawFormat format) {
  if (format == DrawFormat::Dot) return dot;
  // Graphviz reports through agerr: collect its messages instead of printing them.
  static thread_local std::string messages;
  messages.clear();
  agseterrf([](char* text) -> int {
    messages += text;
    return 0;
  });
  agseterr(AGERR);
  const std::lock_guard<std::mutex> one_at_a_time(graphviz_mutex);  // Graphviz has globals
  GVC_t* const gvc = graphviz_context();
  if (!gvc) throw LimitError("Graphviz could not start (gvContext)");
  Agdisc_t discipline = {&AgMemDisc, &sequential_ids, &text_io};
  TextChannel channel{&dot};
  std::unique_ptr<Agraph_t, int (*)(Agraph_t*)> graph(agread(&channel, &discipline), agclose);
  if (!graph) throw LimitError("Graphviz refused the picture's DOT text: " + messages);
  if (gvLayout(gvc, graph.get(), "dot") != 0)
    throw LimitError("Graphviz could not lay out the picture: " + messages);
  char* data = nullptr;
  std::string out;
  const int rendered = render_data(gvRenderData, gvc, graph.get(), to_string(format), &data, out);
  if (data) gvFreeRenderData(data);
  gvFreeLayout(gvc, graph.get());
  if (rendered != 0 || out.empty())
    throw LimitError(std::string("Graphviz could not render ") + to_string(format) +
                     " (is its plugin installed? Debian: graphviz): " + messages);
  return out;
}

std::string draw_picture(const Network& network, const std::vector<LetterId>* word,
                         DrawFormat format, const std::string& word_option) {
  if (!word) return render_dot(network_dot(network), format);
  check_word_length(network, word->size(), word_option);
  return render_dot(attention_dot(network, *word), format);
}

}  // namespace krc
