#pragma once
// The one error type for bad input anywhere in krc: it names the file, the place in it
// (a line, a JSON pointer, a tensor name) and the problem. The krc command turns it into
// a message on stderr and exit status 2.
#include <stdexcept>
#include <string>

namespace krc {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string place, std::string problem)
      : std::runtime_error(compose(file, place, problem)),
        file_(std::move(file)),
        place_(std::move(place)),
        problem_(std::move(problem)) {}

  const std::string& file() const { return file_; }
  const std::string& place() const { return place_; }
  const std::string& problem() const { return problem_; }

 private:
  static std::string compose(const std::string& file, const std::string& place,
                             const std::string& problem) {
    std::string message = file.empty() ? std::string("<input>") : file;
    if (!place.empty()) message += ": " + place;
    return message + ": " + problem;
  }
  std::string file_, place_, problem_;
};

// A request the tool cannot serve within its limits (semigroup too large, network too wide):
// not bad input, but reported the same way (exit status 2, no partial output).
class LimitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace krc
