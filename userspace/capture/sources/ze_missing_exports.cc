// What xtrace says of the entry points a process's Level Zero loader does not export; see
// ZeSource::SayMissing.
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "capture/capture_options.h"
#include "capture/sources/ze_probe_specs.h"
#include "capture/sources/ze_source.h"

namespace xtrace {

// A program runs with the loader it maps, so an entry point that loader lacks is never called
// through it: its lack alone loses nothing, and saying it at every capture on an older loader
// (bookworm's lacks six) would be a warning users learn to skip. A program can call such a
// function only past the loader, through a pointer its driver hands out
// (zeDriverGetExtensionFunctionAddress). Those probed in drivers too (the launches with
// arguments and parameters, zeEventCounterBasedCreate) are traced there. The others are probed
// at the loader's export alone, so a call through the driver's pointer to one is not traced:
// that is worth a warning, and only where the driver hands it out, which xtrace's own Level
// Zero asked its drivers at Begin (Intel's driver leaves these core functions to the loader).
// Tables taken from the loader cannot hold them either: an older loader's getters copy its
// own, older tables, and its dispatch (which dispatch_targets.h follows) has no slot for them.
// The whole fact stays in --verbose output.
void ZeSource::SayMissing(const MappedLibrary& lib, const std::vector<const ProbeSpec*>& missing) {
  if (missing.empty() || !IsLoaderPath(lib.path)) return;
  if (!said_missing_.emplace(std::tuple{lib.dev_major, lib.dev_minor, lib.inode}, true).second)
    return;
  std::vector<std::string_view> all, in_drivers, past_the_loader, nowhere;
  for (const ProbeSpec* spec : missing) {
    all.push_back(spec->symbol);
    if (spec->in_driver) in_drivers.push_back(spec->symbol);
    else if (driver_functions_.HandsOut(spec->symbol)) past_the_loader.push_back(spec->symbol);
    else nowhere.push_back(spec->symbol);
  }
  auto list = [](const std::vector<std::string_view>& names) {
    std::string out;
    for (std::string_view n : names) out += (out.empty() ? "" : ", ") + std::string(n);
    return out;
  };
  if (ctx_.options.verbose) {
    std::string text = lib.path + " does not export " + list(all) +
                       " (an older Level Zero loader): no call to them goes through it";
    if (!in_drivers.empty())
      text += "; " + list(in_drivers) +
              " probed in drivers, where a call through the pointer a driver hands out lands";
    if (!nowhere.empty())
      text += "; " + list(nowhere) + " handed out by no driver xtrace's own Level Zero loaded";
    ctx_.say(text);
  }
  if (past_the_loader.empty()) return;
  const std::string text =
      lib.path + " does not export " + list(past_the_loader) +
      " (an older Level Zero loader), and the Level Zero driver hands " +
      (past_the_loader.size() == 1 ? "it" : "them") +
      " out by pointer (zeDriverGetExtensionFunctionAddress): a call through such a pointer, "
      "past the loader, is not traced";
  ctx_.say(text);
  if (ctx_.note) ctx_.note(text);
}

}  // namespace xtrace
