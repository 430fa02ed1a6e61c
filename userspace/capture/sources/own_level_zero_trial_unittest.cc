#include "capture/sources/own_level_zero_trial.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <string>

namespace xtrace {
namespace {

const std::string kLost =
    "; the capture goes on without device clock readings (device times are estimated unless the "
    "traced processes read their clocks), the devices' names and engines, and where the drivers "
    "keep the functions they hand out by pointer";

// A memory map at a crash in zeInit: the loader, a driver (executable and not), libc.
const std::string kMaps =
    "7f0000000000-7f0000001000 r--p 00000000 08:01 11 /usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.0\n"
    "7f0000001000-7f0000002000 r-xp 00001000 08:01 11 /usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.0\n"
    "7f0000010000-7f0000011000 r--p 00000000 08:01 12 /opt/l0/libze_null.so.1\n"
    "7f0000011000-7f0000012000 r-xp 00001000 08:01 12 /opt/l0/libze_null.so.1\n"
    "7f0000020000-7f0000021000 r-xp 00001000 08:01 13 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7ffd00000000-7ffd00001000 rw-p 00000000 00:00 0 [stack]\n";

TEST(TrialVerdictTest, AChildThatCameThroughLeavesLevelZeroOn) {
  TrialEnd end;
  end.report = "begin\ncall zeInit\ncall zeDriverGet\ndone\n";
  EXPECT_EQ(TrialVerdict(end), std::nullopt);
  // No driver, no GPU: the same start-up fails as it would in xtrace, which says so itself.
  end.report = "begin\ncall zeInit\ndone\n";
  EXPECT_EQ(TrialVerdict(end), std::nullopt);
}

TEST(TrialVerdictTest, AChildThatNeverBeganTriedNothing) {
  TrialEnd end;
  end.exit_status = 127;  // the exec failed
  EXPECT_EQ(TrialVerdict(end), std::nullopt);
}

TEST(TrialVerdictTest, ADeathBySignalNamesTheSignalTheCallTheDriverAndTheLoss) {
  TrialEnd end;
  end.signal = SIGABRT;
  end.report = "begin\ncall zeInit\nmaps\n" + kMaps;
  end.maps = kMaps;
  end.err = "some driver chatter\n*** stack smashing detected ***: terminated\n";
  EXPECT_EQ(TrialVerdict(end),
            "xtrace's own Level Zero is off: a trial of it in a child process died of SIGABRT in "
            "zeInit (*** stack smashing detected ***: terminated) with the driver "
            "/opt/l0/libze_null.so.1" + kLost);
}

TEST(TrialVerdictTest, AnExitInTheMiddleIsAFailureToo) {
  TrialEnd end;
  end.exit_status = 3;
  end.report = "begin\ncall zeInit\ncall zeDriverGet\ncall zeDeviceGet\n";
  end.alt_drivers = "/opt/a/libze_a.so,/opt/b/libze_b.so";
  // Nothing in the map: the drivers the loader was told of stand in.
  EXPECT_EQ(TrialVerdict(end),
            "xtrace's own Level Zero is off: a trial of it in a child process exited with status "
            "3 in zeDeviceGet with the drivers /opt/a/libze_a.so, /opt/b/libze_b.so" + kLost);
}

TEST(TrialVerdictTest, AHangNamesTheBoundAndEveryDriverLoaded) {
  TrialEnd end;
  end.timed_out = true;
  end.report = "begin\ncall zeInit\n";
  end.maps = kMaps + "7f0000031000-7f0000032000 r-xp 00001000 08:01 14 /opt/l0/libxtrace_simze.so\n";
  end.err = "*** a last word that a hang does not explain ***\n";
  EXPECT_EQ(TrialVerdict(end),
            "xtrace's own Level Zero is off: a trial of it in a child process did not return from "
            "zeInit within 10 s with the drivers /opt/l0/libze_null.so.1, "
            "/opt/l0/libxtrace_simze.so" + kLost);
}

TEST(TrialVerdictTest, ALongLastLineIsCut) {
  TrialEnd end;
  end.signal = SIGSEGV;
  end.report = "begin\ncall zeInit\n";
  end.err = std::string(300, 'x') + "\n\n";
  const auto said = TrialVerdict(end);
  ASSERT_TRUE(said.has_value());
  EXPECT_NE(said->find("died of SIGSEGV in zeInit (" + std::string(200, 'x') + "...)" + kLost),
            std::string::npos)
      << *said;
}

}  // namespace
}  // namespace xtrace
