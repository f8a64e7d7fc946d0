#pragma once
#include <lame/lame.h>
