// One error hierarchy for the whole tool. Throw at the point of failure, naming the file,
// the place in it (line, column, node, layer, field) and what was expected:
//
//   try {
//     throw witness::InputError("models/AC1.h5", "layer 'dense_2'", "expected a kernel of shape [16, 8]");
//   } catch (const witness::Error& e) {
//     std::cerr << "error: " << e.what() << '\n';   // models/AC1.h5: layer 'dense_2': expected a kernel of ...
//     int status = e.exit_code();                   // 2: bad input
//   }
//
// The CLI prints `error: <what()>` and exits with exit_code() (2 for bad input, 1 otherwise).
#pragma once

#include <stdexcept>
#include <string>

namespace witness {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // Process exit code the CLI uses for this error.
  [[nodiscard]] virtual int exit_code() const { return 1; }
};

// Malformed or inconsistent input: files, schemas, data, command-line values.
class InputError : public Error {
 public:
  // Messages echo what was read: control characters are escaped and very long runs shortened.
  explicit InputError(const std::string& message);
  // "<file>: <where>: <what>", with empty parts left out.
  InputError(const std::string& file, const std::string& where, const std::string& what);
  [[nodiscard]] int exit_code() const override { return 2; }
};

// Well-formed input that uses something witness does not support (an ONNX op, a Keras layer).
class UnsupportedError : public InputError {
 public:
  using InputError::InputError;
};

// A bug or an environment failure (out of memory, a solver crash): exit code 1.
class InternalError : public Error {
 public:
  using Error::Error;
};

}  // namespace witness
