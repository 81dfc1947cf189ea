/* A thread of its own that writes answer frames to sockets without the interpreter lock
 * (rocketmq_spec.reference_broker.sender explains why and how the event loop uses it).
 *
 * submit(fd, frame) copies the frame into a job and returns; flush() wakes the thread, which takes every queued job at once and
 * sends each run of jobs for one descriptor with one sendmsg(MSG_DONTWAIT | MSG_NOSIGNAL), holding no Python object. What a socket does not take
 * (a full buffer) is kept, with every later frame for the same descriptor, as that descriptor's leftover,
 * and one byte on the wake-up pipe tells the event loop to collect it (leftovers(), then drain(fd)). drain(fd) waits until no job for fd
 * is queued or being sent and hands back its leftover, so the caller can write through its own transport
 * in order. A frame a socket refuses with an error is dropped: the connection is ending. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct Job {
    struct Job *next;
    int fd;
    Py_ssize_t length;
    char data[];
} Job;

typedef struct {
    Job *first;
    Job *last;
} Jobs;

typedef struct {
    PyObject_HEAD
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t queued;  /* jobs were queued, or the sender stops */
    pthread_cond_t sent;    /* a batch was sent */
    Jobs queue;
    Jobs leftover;          /* unsent bytes, in order, as jobs */
    int *in_flight;         /* per descriptor: jobs queued or being sent */
    char *blocked;          /* per descriptor: has a leftover, so later frames wait behind it */
    int capacity;
    int wake[2];
    int running;
    int started;
} Sender;

static void push(Jobs *jobs, Job *job) {
    job->next = NULL;
    if (jobs->last) jobs->last->next = job; else jobs->first = job;
    jobs->last = job;
}

static int grow(Sender *s, int fd) {
    if (fd < s->capacity) return 0;
    int capacity = s->capacity ? s->capacity : 1024;
    while (capacity <= fd) capacity *= 2;
    int *in_flight = realloc(s->in_flight, sizeof(int) * capacity);
    if (!in_flight) return -1;
    s->in_flight = in_flight;
    char *blocked = realloc(s->blocked, capacity);
    if (!blocked) return -1;
    s->blocked = blocked;
    memset(s->in_flight + s->capacity, 0, sizeof(int) * (capacity - s->capacity));
    memset(s->blocked + s->capacity, 0, capacity - s->capacity);
    s->capacity = capacity;
    return 0;
}

#define RUN_MAX 64  /* frames handed to one sendmsg; well under any system's IOV_MAX */

/* Send a run of jobs for one descriptor, in order, with as few system calls as the socket allows (no lock
 * held): one sendmsg for the whole run where it takes everything. Returns the jobs holding what is left,
 * linked in order, or NULL when everything went or the connection failed. A peer that keeps many
 * requests in flight on one connection (a producer shared by many threads) gets the answers of a turn of
 * the loop in one write: one segment through the kernel and one read for the peer, instead of one each. */
static Job *send_run(Job **run, int count, int blocked) {
    int first = 0;  /* the first job not completely sent */
    while (!blocked && first < count) {
        struct iovec iov[RUN_MAX];
        for (int i = first; i < count; i++) {
            iov[i - first].iov_base = run[i]->data;
            iov[i - first].iov_len = (size_t)run[i]->length;
        }
        struct msghdr message;
        memset(&message, 0, sizeof message);
        message.msg_iov = iov;
        message.msg_iovlen = (size_t)(count - first);
        ssize_t n = sendmsg(run[first]->fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (n <= 0) {  /* the connection is ending: nobody reads the rest */
            for (int i = first; i < count; i++) free(run[i]);
            return NULL;
        }
        while (n > 0) {
            Job *job = run[first];
            if (n >= job->length) {
                n -= job->length;
                free(job);
                first++;
            } else {
                memmove(job->data, job->data + n, (size_t)(job->length - n));
                job->length -= n;
                n = 0;
            }
        }
    }
    Job *rest = NULL, **tail = &rest;
    for (int i = first; i < count; i++) {
        run[i]->next = NULL;
        *tail = run[i];
        tail = &run[i]->next;
    }
    return rest;
}

static void *run(void *arg) {
    Sender *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (s->running && !s->queue.first) pthread_cond_wait(&s->queued, &s->lock);
        if (!s->queue.first) break;
        Job *job = s->queue.first;
        s->queue.first = s->queue.last = NULL;
        int woke = 0;
        while (job) {
            int fd = job->fd, blocked = s->blocked[fd], count = 0;
            Job *jobs[RUN_MAX];
            while (job && job->fd == fd && count < RUN_MAX) {
                jobs[count++] = job;
                job = job->next;
            }
            pthread_mutex_unlock(&s->lock);
            Job *rest = send_run(jobs, count, blocked);
            pthread_mutex_lock(&s->lock);
            if (rest) {
                while (rest) {
                    Job *next = rest->next;
                    push(&s->leftover, rest);
                    rest = next;
                }
                s->blocked[fd] = 1;
                woke = 1;
            }
            s->in_flight[fd] -= count;
        }
        pthread_cond_broadcast(&s->sent);
        if (woke) {
            char byte = 1;
            (void)!write(s->wake[1], &byte, 1);
        }
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static int Sender_init(Sender *s, PyObject *args, PyObject *kwargs) {
    static char *names[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "", names)) return -1;
    if (s->started) return 0;
    if (pipe(s->wake) != 0) { PyErr_SetFromErrno(PyExc_OSError); return -1; }
    fcntl(s->wake[0], F_SETFL, O_NONBLOCK);
    fcntl(s->wake[1], F_SETFL, O_NONBLOCK);
    fcntl(s->wake[0], F_SETFD, FD_CLOEXEC);
    fcntl(s->wake[1], F_SETFD, FD_CLOEXEC);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->queued, NULL);
    pthread_cond_init(&s->sent, NULL);
    s->running = 1;
    if (pthread_create(&s->thread, NULL, run, s) != 0) {
        PyErr_SetString(PyExc_OSError, "cannot start the sender thread");
        return -1;
    }
    s->started = 1;
    return 0;
}

static PyObject *Sender_submit(Sender *s, PyObject *args) {
    int fd;
    Py_buffer frame;
    if (!PyArg_ParseTuple(args, "iy*", &fd, &frame)) return NULL;
    Job *job = fd >= 0 ? malloc(sizeof(Job) + frame.len) : NULL;
    if (!job) { PyBuffer_Release(&frame); return PyErr_NoMemory(); }
    job->fd = fd;
    job->length = frame.len;
    memcpy(job->data, frame.buf, frame.len);
    PyBuffer_Release(&frame);
    pthread_mutex_lock(&s->lock);
    if (!s->running || grow(s, fd) != 0) {
        pthread_mutex_unlock(&s->lock);
        free(job);
        PyErr_SetString(PyExc_RuntimeError, "the sender is stopped");
        return NULL;
    }
    push(&s->queue, job);
    s->in_flight[fd]++;
    pthread_mutex_unlock(&s->lock);
    Py_RETURN_NONE;
}

/* Wake the thread for what was submitted since the last flush: once per turn of the event loop rather
 * than once per frame, since each wake of a waiting thread is a system call. */
static PyObject *Sender_flush(Sender *s, PyObject *unused) {
    pthread_mutex_lock(&s->lock);
    if (s->queue.first) pthread_cond_signal(&s->queued);
    pthread_mutex_unlock(&s->lock);
    Py_RETURN_NONE;
}

/* The leftover of fd, joined, and removed (lock held). */
static PyObject *take_leftover(Sender *s, int fd) {
    Py_ssize_t length = 0;
    for (Job *job = s->leftover.first; job; job = job->next) if (job->fd == fd) length += job->length;
    PyObject *rest = PyBytes_FromStringAndSize(NULL, length);
    if (!rest) return NULL;
    char *out = PyBytes_AS_STRING(rest);
    Jobs kept = {NULL, NULL};
    Job *job = s->leftover.first;
    while (job) {
        Job *next = job->next;
        if (job->fd == fd) {
            memcpy(out, job->data, job->length);
            out += job->length;
            free(job);
        } else {
            push(&kept, job);
        }
        job = next;
    }
    s->leftover = kept;
    if (fd < s->capacity) s->blocked[fd] = 0;
    return rest;
}

static PyObject *Sender_drain(Sender *s, PyObject *arg) {
    int fd = PyLong_AsLong(arg);
    if (fd == -1 && PyErr_Occurred()) return NULL;
    PyObject *rest;
    pthread_mutex_lock(&s->lock);
    if (fd < s->capacity && s->in_flight[fd] > 0) {
        pthread_cond_signal(&s->queued);
        pthread_mutex_unlock(&s->lock);
        Py_BEGIN_ALLOW_THREADS
        pthread_mutex_lock(&s->lock);
        while (s->in_flight[fd] > 0) pthread_cond_wait(&s->sent, &s->lock);
        pthread_mutex_unlock(&s->lock);
        Py_END_ALLOW_THREADS
        pthread_mutex_lock(&s->lock);
    }
    rest = take_leftover(s, fd);
    pthread_mutex_unlock(&s->lock);
    return rest;
}

static PyObject *Sender_leftovers(Sender *s, PyObject *unused) {
    char bytes[64];
    while (read(s->wake[0], bytes, sizeof bytes) > 0) {}
    PyObject *result = PyList_New(0);
    if (!result) return NULL;
    pthread_mutex_lock(&s->lock);
    for (Job *job = s->leftover.first; job; job = job->next) {
        PyObject *fd = PyLong_FromLong(job->fd);
        int failed = !fd || PySequence_Contains(result, fd) < 0;
        if (!failed && !PySequence_Contains(result, fd)) failed = PyList_Append(result, fd) != 0;
        Py_XDECREF(fd);
        if (failed) {
            pthread_mutex_unlock(&s->lock);
            Py_DECREF(result);
            return NULL;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return result;
}

static void stop(Sender *s) {
    if (!s->started) return;
    pthread_mutex_lock(&s->lock);
    s->running = 0;
    pthread_cond_signal(&s->queued);
    pthread_mutex_unlock(&s->lock);
    Py_BEGIN_ALLOW_THREADS
    pthread_join(s->thread, NULL);
    Py_END_ALLOW_THREADS
    s->started = 0;
    while (s->leftover.first) {
        Job *next = s->leftover.first->next;
        free(s->leftover.first);
        s->leftover.first = next;
    }
    s->leftover.last = NULL;
    close(s->wake[0]);
    close(s->wake[1]);
}

static PyObject *Sender_close(Sender *s, PyObject *unused) {
    stop(s);
    Py_RETURN_NONE;
}

static PyObject *Sender_wake_fd(Sender *s, void *closure) {
    return PyLong_FromLong(s->started ? s->wake[0] : -1);
}

static void Sender_dealloc(Sender *s) {
    stop(s);
    free(s->in_flight);
    free(s->blocked);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyMethodDef Sender_methods[] = {
    {"submit", (PyCFunction)Sender_submit, METH_VARARGS, "Queue a copy of a frame for a descriptor."},
    {"flush", (PyCFunction)Sender_flush, METH_NOARGS, "Wake the thread for the frames submitted."},
    {"drain", (PyCFunction)Sender_drain, METH_O, "Wait until a descriptor's frames are sent; its leftover."},
    {"leftovers", (PyCFunction)Sender_leftovers, METH_NOARGS, "The descriptors that have a leftover."},
    {"close", (PyCFunction)Sender_close, METH_NOARGS, "Send what is queued, then end the thread."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Sender_getset[] = {
    {"wake_fd", (getter)Sender_wake_fd, NULL, "Readable when leftovers wait to be collected.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject SenderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rocketmq_spec.reference_broker._sender.Sender",
    .tp_basicsize = sizeof(Sender),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Writes frames to sockets on a thread of its own, without the interpreter lock.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Sender_init,
    .tp_dealloc = (destructor)Sender_dealloc,
    .tp_methods = Sender_methods,
    .tp_getset = Sender_getset,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_sender", NULL, -1, NULL};

PyMODINIT_FUNC PyInit__sender(void) {
    if (PyType_Ready(&SenderType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&SenderType);
    if (PyModule_AddObject(m, "Sender", (PyObject *)&SenderType) < 0) {
        Py_DECREF(&SenderType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
