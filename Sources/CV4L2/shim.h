// libv4l2 and the kernel's V4L2 API, with typed shims for what Swift cannot call:
// - v4l2_open and v4l2_ioctl are variadic: one typed shim per ioctl Parley uses, so the C
//   compiler checks each argument type (no generic (request, void *) entry point);
// - the VIDIOC_* request numbers and V4L2_PIX_FMT_* codes are function-like macros
//   (_IOWR(...), v4l2_fourcc(...)): exposed as functions returning the constant.
#ifndef PARLEY_CV4L2_SHIM_H
#define PARLEY_CV4L2_SHIM_H
#include <fcntl.h>
#include <libv4l2.h>
#include <linux/videodev2.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

/// v4l2_open(path, flags): opens through libv4l2 so libv4lconvert can emulate formats.
static inline int parley_v4l2_open(const char *path, int flags) { return v4l2_open(path, flags); }

// MARK: request numbers (for documentation, logging and tests)
static inline unsigned long parley_VIDIOC_QUERYCAP(void) { return VIDIOC_QUERYCAP; }
static inline unsigned long parley_VIDIOC_ENUM_FMT(void) { return VIDIOC_ENUM_FMT; }
static inline unsigned long parley_VIDIOC_ENUM_FRAMESIZES(void) { return VIDIOC_ENUM_FRAMESIZES; }
static inline unsigned long parley_VIDIOC_ENUM_FRAMEINTERVALS(void) { return VIDIOC_ENUM_FRAMEINTERVALS; }
static inline unsigned long parley_VIDIOC_S_FMT(void) { return VIDIOC_S_FMT; }
static inline unsigned long parley_VIDIOC_S_PARM(void) { return VIDIOC_S_PARM; }
static inline unsigned long parley_VIDIOC_REQBUFS(void) { return VIDIOC_REQBUFS; }
static inline unsigned long parley_VIDIOC_QUERYBUF(void) { return VIDIOC_QUERYBUF; }
static inline unsigned long parley_VIDIOC_QBUF(void) { return VIDIOC_QBUF; }
static inline unsigned long parley_VIDIOC_DQBUF(void) { return VIDIOC_DQBUF; }
static inline unsigned long parley_VIDIOC_STREAMON(void) { return VIDIOC_STREAMON; }
static inline unsigned long parley_VIDIOC_STREAMOFF(void) { return VIDIOC_STREAMOFF; }

// MARK: pixel formats
static inline __u32 parley_V4L2_PIX_FMT_YUV420(void) { return V4L2_PIX_FMT_YUV420; }
static inline __u32 parley_V4L2_PIX_FMT_YUYV(void) { return V4L2_PIX_FMT_YUYV; }
static inline __u32 parley_V4L2_PIX_FMT_MJPEG(void) { return V4L2_PIX_FMT_MJPEG; }

// MARK: typed ioctls (each returns v4l2_ioctl's result: 0, or -1 with errno set)
static inline int parley_v4l2_querycap(int fd, struct v4l2_capability *cap) {
    return v4l2_ioctl(fd, VIDIOC_QUERYCAP, cap);
}
static inline int parley_v4l2_enum_fmt(int fd, struct v4l2_fmtdesc *desc) {
    return v4l2_ioctl(fd, VIDIOC_ENUM_FMT, desc);
}
static inline int parley_v4l2_enum_framesizes(int fd, struct v4l2_frmsizeenum *size) {
    return v4l2_ioctl(fd, VIDIOC_ENUM_FRAMESIZES, size);
}
static inline int parley_v4l2_enum_frameintervals(int fd, struct v4l2_frmivalenum *interval) {
    return v4l2_ioctl(fd, VIDIOC_ENUM_FRAMEINTERVALS, interval);
}
static inline int parley_v4l2_s_fmt(int fd, struct v4l2_format *format) {
    return v4l2_ioctl(fd, VIDIOC_S_FMT, format);
}
static inline int parley_v4l2_g_parm(int fd, struct v4l2_streamparm *parm) {
    return v4l2_ioctl(fd, VIDIOC_G_PARM, parm);
}
static inline int parley_v4l2_s_parm(int fd, struct v4l2_streamparm *parm) {
    return v4l2_ioctl(fd, VIDIOC_S_PARM, parm);
}
static inline int parley_v4l2_reqbufs(int fd, struct v4l2_requestbuffers *req) {
    return v4l2_ioctl(fd, VIDIOC_REQBUFS, req);
}
static inline int parley_v4l2_querybuf(int fd, struct v4l2_buffer *buf) {
    return v4l2_ioctl(fd, VIDIOC_QUERYBUF, buf);
}
static inline int parley_v4l2_qbuf(int fd, struct v4l2_buffer *buf) {
    return v4l2_ioctl(fd, VIDIOC_QBUF, buf);
}
static inline int parley_v4l2_dqbuf(int fd, struct v4l2_buffer *buf) {
    return v4l2_ioctl(fd, VIDIOC_DQBUF, buf);
}
static inline int parley_v4l2_streamon(int fd, enum v4l2_buf_type type) {
    int t = (int)type;
    return v4l2_ioctl(fd, VIDIOC_STREAMON, &t);
}
static inline int parley_v4l2_streamoff(int fd, enum v4l2_buf_type type) {
    int t = (int)type;
    return v4l2_ioctl(fd, VIDIOC_STREAMOFF, &t);
}

/// The buffer's offset for v4l2_mmap (the `m` union's `offset` member).
static inline __u32 parley_v4l2_buffer_offset(const struct v4l2_buffer *buf) { return buf->m.offset; }

#endif
