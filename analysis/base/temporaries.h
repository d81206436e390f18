// Temporaries the CLI is writing (OutputFile's name.tmp.PID), removed when the CLI is
// ended by SIGINT, SIGTERM or SIGHUP before it renames them: a Ctrl-C during a long export
// left them behind. The handler unlinks what is registered, then lets the signal end the
// process as it would have (default action, re-raised), so the exit status still says so.
#pragma once

#include <string>

namespace cumemtrace {

// Registers `path` (installing the handlers the first time); the slot to unregister, or
// -1 when all 64 slots are taken or the path is too long (that temporary is then not
// removed on a signal; nothing else changes).
int register_temporary(const std::string& path);

// Forgets a slot from register_temporary (renamed or removed by its owner); -1 is ignored.
void unregister_temporary(int slot);

}  // namespace cumemtrace
