// What the interposed libc calls (Interpose.cpp) ask of the agent (AgentMain.cpp).
#pragma once

namespace sonde::agent {

// This process is traced and is the one the agent attached in (not a vfork
// child sharing its memory).
bool tracingThisProcess();

// exit/_exit: thread.end for the caller, process.end, then detach. Idempotent.
void processExiting();

// exec: stop handlers, write all output, leave the segment (the new image has no
// agent); false if there was nothing to do. After a failed exec, undo it.
bool prepareExec();
void execFailed();

// After a successful dlopen / a dlclose.
void objectsLoaded();
void objectsUnloaded();

// pthread_create without thread.begin (the agent's own threads), all signals
// blocked in it.
int createAgentThread(void *(*start)(void *), void *arg = nullptr);

} // namespace sonde::agent
