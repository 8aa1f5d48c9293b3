/* Which SoC the board names, and its NPU (device/spec/soc.py board_soc): the device tree's compatible string, then
   soc0's files, then Android's getprop when no file names anything; the first name the spec's table knows, else the
   first MTxxxx seen (NPU unknown), else unknown. Read on the board, never guessed. */
#ifndef WKV_SOC_H
#define WKV_SOC_H

#include "json_out.h"

/* hello's `soc` object into `o` (zeroed). */
void wkv_board_soc(wkv_out *o);

/* hello's `os`: "Android RELEASE" (getprop ro.build.version.release; "Android" when it says nothing) on an Android
   build, else "Linux". */
const char *wkv_board_os(void);

#endif
