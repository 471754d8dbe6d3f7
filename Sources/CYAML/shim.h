#ifndef TRACKHUB_CYAML_SHIM_H
#define TRACKHUB_CYAML_SHIM_H
/* libyaml (Debian: libyaml-dev, runtime libyaml-0-2): the parser behind `--config FILE`. */
#include <yaml.h>
#endif
