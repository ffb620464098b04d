#include "output_file.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "krc/input_error.hpp"

namespace krc::cli {

void write_output(const std::string& path, std::string_view contents) {
  if (path == "-") {
    std::cout.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    std::cout.flush();
    return;
  }
  namespace fs = std::filesystem;
  fs::path target(path);
  // A device or pipe (-o /dev/null, a FIFO) is written in place: renaming a temporary file
  // over it would replace the device itself with a regular file.
  std::error_code status_error;
  if (fs::exists(target, status_error) && !fs::is_regular_file(target, status_error)) {
    std::ofstream out(target, std::ios::binary);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!out) throw InputError(path, "", "cannot write here");
    return;
  }
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir)) throw InputError(path, "", "directory does not exist");
  std::random_device rd;
  fs::path temp = dir / (".krc-tmp-" + std::to_string(rd()) + "-" + target.filename().string());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, "", "cannot write here");
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(temp, ignored);
      throw InputError(path, "", "write failed (disk full?)");
    }
  }
  std::error_code ec;
  fs::rename(temp, target, ec);
  if (ec) {
    fs::remove(temp, ec);
    throw InputError(path, "", "cannot replace the file: " + ec.message());
  }
}

}  // namespace krc::cli
