// -c follows exec: the agent comes along into the programs its process (and
// its forks) execute. The contract the preloaded agent read from its
// environment is kept here, with the identity of each descriptor it names, and
// each exec passes it on: the descriptors lose close-on-exec for the exec, and
// the new program's environment gets the contract and the agent in LD_PRELOAD
// (the new agent removes both before its main runs, so the program and what it
// starts never see them). Programs the loader would not preload the agent into
// (set-user-ID, file capabilities, statically linked) get nothing and are named
// in a warning. The exec path is safe in a vfork child: no allocation.
#pragma once

#include <cstddef>

namespace sonde::agent {

// The preloaded agent's constructor, before the contract leaves the
// environment: keeps it for later execs. `agentPath` is this library's file.
void captureExecContract(const char *agentPath);

// Execs are followed (the contract was captured and is still this process's).
bool followsExec();

// Whether this process should attach: its executable or a loaded library is a
// probed file (SONDE_AGENT_PROBED), or every process is probed (also when the
// contract has no list). Reports each
// probed file found, once per process, as "probed DEV:INO" on the status pipe.
bool probedFilesLoaded();

// The session's descriptors are no longer this process's (released, or a
// failed start closed them): execs are no longer followed.
void stopFollowingExec();

// For the exec wrappers. followExec: whether the program (`path`; searched in
// $PATH when `search`; `fd` for fexecve) gets the agent; if so the contract's
// descriptors stay open across the exec until undoFollowExec() (the exec
// failed). A program that cannot get it is named in a warning.
bool followExec(const char *path, bool search, int fd);
void undoFollowExec();
// Bytes followEnvironment() needs for `envp`, then the environment itself,
// built in `buffer`: envp without SONDE_AGENT_* entries, with the contract
// and LD_PRELOAD naming the agent first.
size_t followEnvironmentBytes(char *const envp[]);
char **followEnvironment(char *const envp[], void *buffer);

} // namespace sonde::agent
