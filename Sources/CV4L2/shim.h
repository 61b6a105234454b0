// libv4l2 and the kernel's V4L2 API, with ioctl request numbers as constants Swift can see.
#ifndef PARLEY_CV4L2_SHIM_H
#define PARLEY_CV4L2_SHIM_H
#include <libv4l2.h>
#include <linux/videodev2.h>
#include <sys/ioctl.h>
#endif
