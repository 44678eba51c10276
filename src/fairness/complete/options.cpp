#include "fairness/complete/options.h"

namespace witness {

SplitRule parse_split_rule(const std::string& name) { return kSplitRules.parse(name, "--split"); }

}  // namespace witness
