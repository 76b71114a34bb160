// The text forms of Slurm's accounting commands (text in, structs out; the backend runs them):
//   sacctmgr -n -P show assoc format=<kAssocFormat>   every association (slurm/limits.hpp)
//   sacctmgr -n -P show qos format=<kQosFormat>       every QOS
//   sshare -n -P -U -u USER                           the user's fair-share per account
//   sacctmgr -n -P show user USER format=User,DefaultAccount   the account a job without -A gets
// -P separates fields with '|' and ends records with a newline; names in Slurm's database hold
// neither. Empty fields are unset limits; "UNLIMITED" or "INFINITE" read as unset too. Wall limits
// are Slurm times ("02:00:00", "1-00:00:00"); TRES as parse_tres. sshare indents accounts by
// depth (leading spaces, trimmed here); FairShare may be empty (no shares) and is then unknown.
// Verified on Slurm 22.05.8 and 24.11.5 (tests/data/slurm-cli/sacctmgr-*, sshare-*).
#pragma once

#include <string_view>
#include <vector>

#include "jobgen/slurm/limits.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::slurm {

extern const char* const kAssocFormat;
extern const char* const kQosFormat;

// A record with another number of fields, or a limit that is not a number, Slurm time or TRES
// list, is an error naming the record (never a shorter list).
Expected<std::vector<Association>> parse_sacctmgr_assoc(std::string_view text);
Expected<std::vector<Qos>> parse_sacctmgr_qos(std::string_view text);
Expected<std::vector<Share>> parse_sshare(std::string_view text);
// "" when the user is not listed.
Expected<std::string> parse_default_account(std::string_view text, std::string_view user);

}  // namespace jobgen::slurm
