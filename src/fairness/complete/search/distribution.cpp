#include "fairness/complete/search/distribution.h"

#include <atomic>

namespace witness {

namespace {
std::atomic<DistributedSearch> installed{nullptr};
}  // namespace

void install_distributed_search(DistributedSearch search) { installed.store(search); }

DistributedSearch installed_distributed_search() { return installed.load(); }

}  // namespace witness
