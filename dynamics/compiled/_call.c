/* The C caller of the one-sample entries: composedyn.dynamics.compiled._call.Caller, and
 * composedyn.dynamics.compiled._call.Method, the descriptor that lets a Robot method's plain
 * call reach its Caller without a Python frame (see Method below).
 *
 * A Caller holds the machine address of one compiled entry (made from a declaration by
 * composedyn.dynamics.compiled.declare; all share the signature kernel_t below), the
 * robot's packed model arrays (read only), its scratch arrays (writeable, owned by the
 * robot's Data), the lengths of the entry's input vectors, the shapes of its results, the
 * names and defaults of its integer options and the name of its float argument (or None).
 *
 * Called as  caller(*vectors, [number], *options, out=None)  (number and options
 * positional or by keyword), it checks in C that each vector is a numpy float64 ndarray of
 * its length in native byte order (a strided one is copied), that each option is an int,
 * that the number is a float or an int >= 0 (not NaN) and that out (entries with one result)
 * is a writeable C-contiguous float64 ndarray of the result's shape sharing no byte with an
 * input; it then calls the entry with the data pointers and returns the result (new arrays
 * unless out was given; a tuple for several results).
 *
 * Anything else -- another type, dtype, shape, byte order or keyword, an entry status other
 * than 0 (NaN or inf in an input, a singular mass matrix, a zero quaternion, an option out of
 * range), or the switch array reading 0 -- goes to the fallback with the original arguments,
 * and its result is returned (fallback None: the call returns None).  With nan_fill, status 2
 * (NaN or inf in) returns the results filled with NaN instead.
 *
 * The entry gets p = (model arrays, scratch arrays, input vectors, results) as data
 * pointers, d = (rows of each model array, (rows, columns) of each scratch array, the input
 * lengths, (rows, columns) of each result, columns 0 for a vector), o = the options and the
 * number.  It runs with the GIL held.  The point is the cost of the call: numba's dispatcher
 * costs more than the kernel of a 6-joint arm; this costs a few dozen nanoseconds.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define MAXA 4      /* model arrays, scratch arrays, input vectors, results: at most this many each */
#define MAXO 4      /* integer options */
#define STACK 192   /* strided inputs of up to this many numbers in all are copied on the stack */

static PyObject *str_out, *str_threads, *str_data, *str_frame_index, *str_world, *str_local, *int_zero, *int_one;

typedef int64_t (*kernel_t)(void *const *p, const int64_t *d, const int64_t *o, double s);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    kernel_t fn;
    PyObject *keep;            /* (model arrays..., scratch arrays..., switch): alive while their pointers are used */
    void *fixed[2 * MAXA];     /* model then scratch data pointers */
    int nfixed, nin, nout, nopt, nan_fill;
    npy_intp len[MAXA];        /* input lengths */
    npy_intp rows[MAXA], cols[MAXA];  /* result shapes, cols 0: a vector */
    int64_t d[6 * MAXA];
    int64_t defaults[MAXO];
    npy_intp inlen;            /* sum of the input lengths */
    const int64_t *on;         /* the switch: the entry is used while *on != 0 */
    PyObject *names;           /* tuple of str: the options' keyword names, then the number's (if any) */
    int nscalar;               /* 1 when the entry takes a number */
    PyObject *fallback;
    PyObject *dict;            /* __doc__ and the like */
} Caller;

/* *x = o as a double if o is a float (a subclass too) or an int (not a bool). */
static int number(PyObject *o, double *x) {
    if (PyFloat_Check(o)) {
        *x = PyFloat_AS_DOUBLE(o);
        return 1;
    }
    if (PyLong_CheckExact(o)) {
        *x = PyLong_AsDouble(o);
        if (*x == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        return 1;
    }
    return 0;
}

static PyObject *fall(Caller *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    if (self->fallback == Py_None) Py_RETURN_NONE;
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

/* *x: the data of o if it is a float64 (m,) ndarray in native byte order; strided ones are copied into buf. */
static int vector(PyObject *o, npy_intp m, double *buf, void **x) {
    if (!PyArray_CheckExact(o)) return 0;
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_ISNOTSWAPPED(a) || PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != m)
        return 0;
    if (PyArray_STRIDE(a, 0) == (npy_intp)sizeof(double) || m <= 1) {
        *x = PyArray_DATA(a);
        return 1;
    }
    if (!PyArray_ISALIGNED(a)) return 0;
    const char *p = PyArray_BYTES(a);
    npy_intp stride = PyArray_STRIDE(a, 0);
    for (npy_intp i = 0; i < m; i++) buf[i] = *(const double *)(p + i * stride);
    *x = buf;
    return 1;
}

static int out_ok(Caller *self, PyObject *o) {
    if (!PyArray_CheckExact(o)) return 0;
    PyArrayObject *a = (PyArrayObject *)o;
    int ndim = self->cols[0] ? 2 : 1;
    return PyArray_TYPE(a) == NPY_DOUBLE && PyArray_ISNOTSWAPPED(a) && PyArray_IS_C_CONTIGUOUS(a)
        && PyArray_ISWRITEABLE(a) && PyArray_NDIM(a) == ndim && PyArray_DIM(a, 0) == self->rows[0]
        && (ndim == 1 || PyArray_DIM(a, 1) == self->cols[0]);
}

/* *x = o if o is an int (a bool too: a flag). */
static int integer(PyObject *o, int64_t *x) {
    if (!PyLong_Check(o)) return 0;
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    *x = (int64_t)v;
    return 1;
}

static PyObject *caller_call(PyObject *obj, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Caller *self = (Caller *)obj;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    int nf = self->nfixed, ni = self->nin, no = self->nout, nopt = self->nopt, nscalar = self->nscalar;
    void *p[4 * MAXA];
    int64_t o[MAXO];
    int seen[MAXO + 1] = {0};
    double stack[STACK], *buf = stack, s = 0.0;
    PyObject *given = NULL, *outs[MAXA] = {NULL}, *result = NULL;
    if (!*self->on || nargs < ni || nargs > ni + nopt + nscalar) return fall(self, args, nargsf, kwnames);
    for (int k = 0; k < nopt; k++) o[k] = self->defaults[k];
    for (Py_ssize_t k = ni; k < nargs; k++) {  /* the number (if any), then the options, positional */
        int p = (int)(k - ni), j = nscalar ? (p == 0 ? nopt : p - 1) : p;
        seen[j] = 1;
        if (j < nopt ? !integer(args[k], &o[j]) : !number(args[k], &s)) return fall(self, args, nargsf, kwnames);
    }
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k), *val = args[nargs + k];
        if (no == 1 && (key == str_out || (PyUnicode_CheckExact(key) && PyUnicode_Compare(key, str_out) == 0))) {
            if (val == Py_None) continue;
            if (!out_ok(self, val)) return fall(self, args, nargsf, kwnames);
            given = val;
            continue;
        }
        int j = 0;
        while (j < nopt + nscalar && !(PyUnicode_Check(key) && PyUnicode_Compare(key, PyTuple_GET_ITEM(self->names, j)) == 0))
            j++;
        if (j == nopt + nscalar || seen[j]) return fall(self, args, nargsf, kwnames);
        seen[j] = 1;
        if (j < nopt ? !integer(val, &o[j]) : !number(val, &s)) return fall(self, args, nargsf, kwnames);
    }
    if (nscalar && !(s >= 0.0)) return fall(self, args, nargsf, kwnames);  /* negative or NaN: refused there */
    if (self->inlen > STACK) {
        buf = PyMem_Malloc(self->inlen * sizeof(double));
        if (buf == NULL) return PyErr_NoMemory();
    }
    for (int k = 0; k < nf; k++) p[k] = self->fixed[k];
    for (int k = 0, at = 0; k < ni; at += self->len[k], k++) {
        if (!vector(args[k], self->len[k], buf + at, &p[nf + k])) {
            result = fall(self, args, nargsf, kwnames);
            goto done;
        }
    }
    if (given != NULL) {  /* out sharing memory with an input: refused (the kernel would read what it writes) */
        const char *lo = PyArray_BYTES((PyArrayObject *)given), *hi = lo + PyArray_NBYTES((PyArrayObject *)given);
        for (int k = 0; k < ni; k++) {  /* each input is a 1-d ndarray here: its first and last byte */
            PyArrayObject *a = (PyArrayObject *)args[k];
            npy_intp span = (self->len[k] - 1) * PyArray_STRIDE(a, 0);
            const char *x = PyArray_BYTES(a), *first = span < 0 ? x + span : x, *last = (span < 0 ? x : x + span) + 8;
            if (first < hi && lo < last) {
                result = fall(self, args, nargsf, kwnames);
                goto done;
            }
        }
    }
    for (int k = 0; k < no; k++) {
        if (k == 0 && given != NULL) {
            Py_INCREF(given);
            outs[0] = given;
        } else {
            npy_intp dims[2] = {self->rows[k], self->cols[k]};
            outs[k] = PyArray_EMPTY(self->cols[k] ? 2 : 1, dims, NPY_DOUBLE, 0);
            if (outs[k] == NULL) goto done;
        }
        p[nf + ni + k] = PyArray_DATA((PyArrayObject *)outs[k]);
    }
    int64_t status = self->fn(p, self->d, o, s);
    if (status == 2 && self->nan_fill) {
        for (int k = 0; k < no; k++) {
            double *r = (double *)PyArray_DATA((PyArrayObject *)outs[k]);
            for (npy_intp i = 0, size = PyArray_SIZE((PyArrayObject *)outs[k]); i < size; i++) r[i] = NAN;
        }
        status = 0;
    }
    if (status != 0) {
        result = fall(self, args, nargsf, kwnames);
    } else if (no == 1) {
        result = outs[0];
        outs[0] = NULL;
    } else {
        result = PyTuple_New(no);
        for (int k = 0; result != NULL && k < no; k++) {
            PyTuple_SET_ITEM(result, k, outs[k]);
            outs[k] = NULL;
        }
    }
done:
    for (int k = 0; k < no; k++) Py_XDECREF(outs[k]);
    if (buf != stack) PyMem_Free(buf);
    return result;
}

static int caller_traverse(Caller *self, visitproc visit, void *arg) {
    Py_VISIT(self->keep);
    Py_VISIT(self->fallback);
    Py_VISIT(self->dict);
    Py_VISIT(self->names);
    return 0;
}

static int caller_clear(Caller *self) {
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->dict);
    return 0;  /* keep and names stay until dealloc: the call reads them */
}

static void caller_dealloc(Caller *self) {
    PyObject_GC_UnTrack(self);
    caller_clear(self);
    Py_CLEAR(self->keep);
    Py_CLEAR(self->names);
    PyObject_GC_Del(self);
}

static int bad(PyObject *type, const char *what) {
    PyErr_SetString(type, what);
    return 0;
}

/* n non-negative ints of the tuple t (lo <= len <= MAXA) into v; with pairs, (rows, cols) tuples. */
static int sizes(PyObject *t, int lo, npy_intp *v, npy_intp *w, int *count, const char *what) {
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) < lo || PyTuple_GET_SIZE(t) > MAXA) return bad(PyExc_ValueError, what);
    *count = (int)PyTuple_GET_SIZE(t);
    for (int k = 0; k < *count; k++) {
        PyObject *x = PyTuple_GET_ITEM(t, k);
        if (w != NULL) {
            if (!PyTuple_Check(x) || PyTuple_GET_SIZE(x) != 2) return bad(PyExc_ValueError, what);
            w[k] = PyLong_AsSsize_t(PyTuple_GET_ITEM(x, 1));
            x = PyTuple_GET_ITEM(x, 0);
        }
        v[k] = PyLong_AsSsize_t(x);
        if (PyErr_Occurred()) return 0;
        if (v[k] < 1 || (w != NULL && w[k] < 0)) return bad(PyExc_ValueError, what);
    }
    return 1;
}

/* The data pointers of the arrays of the tuple t into ptr: C-contiguous ndarrays in native byte order,
 * read-only (model arrays: an entry indexes with them, so one that could change under it is never
 * trusted) or writeable (scratch), at most MAXA. */
static int arrays(PyObject *t, int writeable, int lo, void **ptr, int *count, const char *what) {
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) < lo || PyTuple_GET_SIZE(t) > MAXA) return bad(PyExc_ValueError, what);
    *count = (int)PyTuple_GET_SIZE(t);
    for (int k = 0; k < *count; k++) {
        PyObject *a = PyTuple_GET_ITEM(t, k);
        if (!PyArray_CheckExact(a) || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)a)
                || !PyArray_ISNOTSWAPPED((PyArrayObject *)a) || PyArray_NDIM((PyArrayObject *)a) < 1
                || PyArray_NDIM((PyArrayObject *)a) > 2
                || !PyArray_ISWRITEABLE((PyArrayObject *)a) != !writeable)
            return bad(PyExc_ValueError, what);
        ptr[k] = PyArray_DATA((PyArrayObject *)a);
    }
    return 1;
}

static PyObject *caller_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kw[] = {"address", "model", "scratch", "inputs", "outputs", "options", "defaults", "scalar",
                         "nan_fill", "switch", "fallback", NULL};
    PyObject *address, *model, *scratch, *inputs, *outputs, *options, *defaults, *scalar, *on, *fallback;
    int nan_fill, nm, ns;
    Caller tmp;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOOOOpOO", kw, &address, &model, &scratch, &inputs, &outputs,
                                     &options, &defaults, &scalar, &nan_fill, &on, &fallback))
        return NULL;
    if (!arrays(model, 0, 1, tmp.fixed, &nm, "Caller: the model arrays must be 1 to 4 read-only C-contiguous ndarrays")
            || !arrays(scratch, 1, 0, tmp.fixed + nm, &ns,
                       "Caller: the scratch arrays must be 0 to 4 writeable C-contiguous ndarrays")
            || !sizes(inputs, 1, tmp.len, NULL, &tmp.nin, "Caller: inputs must be 1 to 4 positive lengths")
            || !sizes(outputs, 1, tmp.rows, tmp.cols, &tmp.nout, "Caller: outputs must be 1 to 4 (rows, columns) pairs"))
        return NULL;
    if (!PyTuple_Check(options) || PyTuple_GET_SIZE(options) > MAXO || !PyTuple_Check(defaults)
            || PyTuple_GET_SIZE(defaults) != PyTuple_GET_SIZE(options))
        return bad(PyExc_ValueError, "Caller: options (names) and defaults (ints) must be tuples of one length <= 4"), NULL;
    tmp.nopt = (int)PyTuple_GET_SIZE(options);
    for (int k = 0; k < tmp.nopt; k++) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(options, k)) || !integer(PyTuple_GET_ITEM(defaults, k), &tmp.defaults[k]))
            return bad(PyExc_TypeError, "Caller: option names must be str and their defaults int"), NULL;
    }
    if (scalar != Py_None && !PyUnicode_Check(scalar))
        return bad(PyExc_TypeError, "Caller: scalar must be the float argument's name (str) or None"), NULL;
    if (!PyArray_CheckExact(on) || PyArray_TYPE((PyArrayObject *)on) != NPY_INT64
            || PyArray_NDIM((PyArrayObject *)on) != 1 || PyArray_DIM((PyArrayObject *)on, 0) != 1)
        return bad(PyExc_ValueError, "Caller: switch must be an int64 array of shape (1,)"), NULL;
    if (fallback != Py_None && !PyCallable_Check(fallback))
        return bad(PyExc_TypeError, "Caller: fallback must be callable or None"), NULL;
    void *fn = PyLong_AsVoidPtr(address);
    if (fn == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Caller: null entry address");
        return NULL;
    }
    PyObject *keep = PyTuple_New(nm + ns + 1), *names = PyTuple_New(tmp.nopt + (scalar != Py_None));
    if (keep == NULL || names == NULL) {
        Py_XDECREF(keep);
        Py_XDECREF(names);
        return NULL;
    }
    for (int k = 0; k < nm + ns; k++) {
        PyObject *a = PyTuple_GET_ITEM(k < nm ? model : scratch, k < nm ? k : k - nm);
        Py_INCREF(a);
        PyTuple_SET_ITEM(keep, k, a);
    }
    Py_INCREF(on);
    PyTuple_SET_ITEM(keep, nm + ns, on);
    for (int k = 0; k < tmp.nopt; k++) {
        Py_INCREF(PyTuple_GET_ITEM(options, k));
        PyTuple_SET_ITEM(names, k, PyTuple_GET_ITEM(options, k));
    }
    if (scalar != Py_None) {
        Py_INCREF(scalar);
        PyTuple_SET_ITEM(names, tmp.nopt, scalar);
    }
    Caller *self = PyObject_GC_New(Caller, type);
    if (self == NULL) {
        Py_DECREF(keep);
        Py_DECREF(names);
        return NULL;
    }
    self->vectorcall = caller_call;
    self->fn = (kernel_t)fn;
    self->keep = keep;
    self->names = names;
    self->nfixed = nm + ns;
    self->nin = tmp.nin;
    self->nout = tmp.nout;
    self->nopt = tmp.nopt;
    self->nscalar = scalar != Py_None;
    self->nan_fill = nan_fill;
    self->inlen = 0;
    int at = 0;
    for (int k = 0; k < 2 * MAXA; k++) self->fixed[k] = k < nm + ns ? tmp.fixed[k] : NULL;
    for (int k = 0; k < nm; k++) self->d[at++] = PyArray_DIM((PyArrayObject *)PyTuple_GET_ITEM(model, k), 0);
    for (int k = 0; k < ns; k++) {
        PyArrayObject *a = (PyArrayObject *)PyTuple_GET_ITEM(scratch, k);
        self->d[at++] = PyArray_DIM(a, 0);
        self->d[at++] = PyArray_NDIM(a) == 2 ? PyArray_DIM(a, 1) : 0;
    }
    for (int k = 0; k < MAXO; k++) self->defaults[k] = k < tmp.nopt ? tmp.defaults[k] : 0;
    for (int k = 0; k < MAXA; k++) {
        self->len[k] = k < tmp.nin ? tmp.len[k] : 0;
        self->rows[k] = k < tmp.nout ? tmp.rows[k] : 0;
        self->cols[k] = k < tmp.nout ? tmp.cols[k] : 0;
    }
    for (int k = 0; k < tmp.nin; k++) {
        self->d[at++] = tmp.len[k];
        self->inlen += tmp.len[k];
    }
    for (int k = 0; k < tmp.nout; k++) {
        self->d[at++] = tmp.rows[k];
        self->d[at++] = tmp.cols[k];
    }
    self->on = (const int64_t *)PyArray_DATA((PyArrayObject *)on);
    Py_INCREF(fallback);
    self->fallback = fallback;
    self->dict = NULL;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

static PyObject *caller_fallback(Caller *self, void *closure) {
    Py_INCREF(self->fallback);
    return self->fallback;
}

static PyGetSetDef caller_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"fallback", (getter)caller_fallback, NULL, "What the call returns when it cannot serve the arguments.", NULL},
    {NULL},
};

static PyTypeObject CallerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "composedyn.dynamics.compiled._call.Caller",
    .tp_basicsize = sizeof(Caller),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Caller(address, model, scratch, inputs, outputs, options, defaults, scalar, nan_fill, switch, "
              "fallback): a compiled one-sample entry called from Python without numba's dispatch (see the "
              "module source).",
    .tp_new = caller_new,
    .tp_dealloc = (destructor)caller_dealloc,
    .tp_traverse = (traverseproc)caller_traverse,
    .tp_clear = (inquiry)caller_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Caller, vectorcall),
    .tp_dictoffset = offsetof(Caller, dict),
    .tp_getset = caller_getset,
};


/* ---- Method: a Robot method whose plain calls go straight to the robot's caller ----
 *
 * Method(name, general, inputs, keywords, frame) is a class attribute standing for the Python
 * function ``general`` (self, ...): it binds like a function, and a call
 * robot.name(*vectors, **kw) with exactly ``inputs`` positional arguments and keywords among
 * ``keywords`` takes the caller robot._threads.data[name] directly (no Python frame between);
 * any other call, and any call that caller declines (it returns None), runs ``general``, which
 * converts, checks and names the error.  frame 1: the positional arguments after the vectors
 * are (frame, reference="world") (keywords too), passed to the caller as the frame's index in
 * robot._frame_index and 0 ("world") or 1 ("local"); frame 2: (frame,) alone.
 */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *name, *general, *keywords;
    int inputs, frame;
    PyObject *dict;
    /* the last robot served, as a weak reference, in the thread last_ts: its caller and frame index */
    PyObject *last_ref, *last_caller, *last_index;
    PyThreadState *last_ts;
} Method;

/* Whether the weak reference ref points to o. */
static int refers_to(PyObject *ref, PyObject *o) {
#if PY_VERSION_HEX >= 0x030D0000
    PyObject *x;
    if (PyWeakref_GetRef(ref, &x) <= 0) {
        PyErr_Clear();
        return 0;
    }
    Py_DECREF(x);
    return x == o;
#else
    return PyWeakref_GET_OBJECT(ref) == o;
#endif
}

/* The keyword argument name k is one of the tuple t's (interned names compare by pointer). */
static int among(PyObject *k, PyObject *t) {
    Py_ssize_t n = PyTuple_GET_SIZE(t);
    for (Py_ssize_t j = 0; j < n; j++)
        if (PyTuple_GET_ITEM(t, j) == k) return (int)j;
    if (!PyUnicode_Check(k)) return -1;
    for (Py_ssize_t j = 0; j < n; j++)
        if (PyUnicode_Compare(k, PyTuple_GET_ITEM(t, j)) == 0) return (int)j;
    return -1;
}

static PyTypeObject CallerType;

/* The caller's result for a plain call, Py_None when it does not take it, NULL on an error. */
static PyObject *method_fast(Method *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0, ni = self->inputs;
    PyObject *frame = NULL, *reference = NULL;
    if (self->frame) {
        if (nargs < ni + 1 || nargs > ni + 1 + (self->frame == 1)) Py_RETURN_NONE;
        if (nargs > ni) frame = args[ni];
        if (nargs > ni + 1) reference = args[ni + 1];
        for (Py_ssize_t k = 0; k < nkw; k++) {
            int j = among(PyTuple_GET_ITEM(kwnames, k), self->keywords);
            if (j < 0 || (j == 0 && frame != NULL) || (j == 1 && reference != NULL)) Py_RETURN_NONE;
            if (j == 0) frame = args[nargs + k]; else reference = args[nargs + k];
        }
        if (frame == NULL) Py_RETURN_NONE;
    } else {
        if (nargs != ni) Py_RETURN_NONE;
        for (Py_ssize_t k = 0; k < nkw; k++)
            if (among(PyTuple_GET_ITEM(kwnames, k), self->keywords) < 0) Py_RETURN_NONE;
    }
    PyObject *robot = args[-1], *local = int_zero;
    if (reference != NULL) {
        if (!PyUnicode_CheckExact(reference)) Py_RETURN_NONE;
        if (reference == str_local || PyUnicode_Compare(reference, str_local) == 0) local = int_one;
        else if (reference != str_world && PyUnicode_Compare(reference, str_world) != 0) Py_RETURN_NONE;
    }
    PyThreadState *ts = PyThreadState_Get();
    PyObject *c, *index = NULL;
    if (self->last_ref != NULL && self->last_ts == ts && refers_to(self->last_ref, robot)) {
        c = self->last_caller;  /* the robot and thread of the last call: their caller, without lookups */
        Py_INCREF(c);
        index = self->last_index;
        Py_XINCREF(index);
    } else {
        PyObject *threads = PyObject_GetAttr(robot, str_threads);
        if (threads == NULL) return NULL;
        PyObject *data = PyObject_GetAttr(threads, str_data);
        Py_DECREF(threads);
        if (data == NULL) return NULL;
        c = PyObject_GetItem(data, self->name);  /* made on first use (Data.__missing__) */
        Py_DECREF(data);
        if (c == NULL) return NULL;
        if (!Py_IS_TYPE(c, &CallerType)) {  /* no compiled path (or the NumPy backend): not kept */
            Py_DECREF(c);
            Py_RETURN_NONE;
        }
        if (self->frame && (index = PyObject_GetAttr(robot, str_frame_index)) == NULL) {
            Py_DECREF(c);
            return NULL;
        }
        PyObject *ref = PyWeakref_NewRef(robot, NULL);
        if (ref == NULL) {
            PyErr_Clear();  /* not weakly referenceable: served, not kept */
        } else {
            Py_XSETREF(self->last_ref, ref);
            Py_INCREF(c);
            Py_XSETREF(self->last_caller, c);
            Py_XINCREF(index);
            Py_XSETREF(self->last_index, index);
            self->last_ts = ts;
        }
    }
    PyObject *result;
    if (!self->frame) {
        result = caller_call(c, args, (size_t)nargs, kwnames);
    } else {
        PyObject *k = NULL;
        if (PyDict_CheckExact(index) && PyUnicode_CheckExact(frame)) k = PyDict_GetItemWithError(index, frame);
        if (k == NULL) {  /* not a frame name (or an error looking it up): the general path names it */
            PyErr_Clear();
            result = Py_None;
            Py_INCREF(result);
        } else {
            PyObject *a[MAXA + 2];
            for (Py_ssize_t j = 0; j < ni; j++) a[j] = args[j];
            a[ni] = k;
            a[ni + 1] = local;
            result = caller_call(c, a, (size_t)(ni + (self->frame == 1 ? 2 : 1)), NULL);
        }
        Py_DECREF(index);
    }
    Py_DECREF(c);
    return result;
}

static PyObject *method_call(PyObject *obj, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Method *self = (Method *)obj;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs >= 1) {
        PyObject *r = method_fast(self, args + 1, nargs - 1, kwnames);
        if (r != Py_None) return r;  /* the result, or NULL with the error set */
        Py_DECREF(r);
    }
    return PyObject_Vectorcall(self->general, args, nargsf, kwnames);
}

static PyObject *method_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static int method_traverse(Method *self, visitproc visit, void *arg) {
    Py_VISIT(self->name);
    Py_VISIT(self->general);
    Py_VISIT(self->keywords);
    Py_VISIT(self->dict);
    Py_VISIT(self->last_ref);
    Py_VISIT(self->last_caller);
    Py_VISIT(self->last_index);
    return 0;
}

static int method_clear(Method *self) {
    Py_CLEAR(self->dict);
    Py_CLEAR(self->last_ref);
    Py_CLEAR(self->last_caller);
    Py_CLEAR(self->last_index);
    return 0;  /* the rest stays until dealloc: a call reads it */
}

static void method_dealloc(Method *self) {
    PyObject_GC_UnTrack(self);
    method_clear(self);
    Py_CLEAR(self->name);
    Py_CLEAR(self->general);
    Py_CLEAR(self->keywords);
    PyObject_GC_Del(self);
}

static PyObject *method_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kw[] = {"name", "general", "inputs", "keywords", "frame", NULL};
    PyObject *name, *general, *keywords;
    int inputs, frame = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "UOiO!|i", kw, &name, &general, &inputs, &PyTuple_Type, &keywords,
                                     &frame))
        return NULL;
    if (!PyCallable_Check(general)) return bad(PyExc_TypeError, "Method: general must be callable"), NULL;
    if (inputs < 1 || inputs > MAXA || frame < 0 || frame > 2)
        return bad(PyExc_ValueError, "Method: inputs must be 1 to 4 and frame 0, 1 or 2"), NULL;
    if (frame && PyTuple_GET_SIZE(keywords) != 3 - frame)
        return bad(PyExc_ValueError, "Method: a frame method's keywords are (frame, reference), or (frame,) "
                                     "with frame 2"), NULL;
    PyObject *names = PyTuple_New(PyTuple_GET_SIZE(keywords));
    if (names == NULL) return NULL;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(keywords); j++) {
        PyObject *k = PyTuple_GET_ITEM(keywords, j);
        if (!PyUnicode_CheckExact(k)) {
            Py_DECREF(names);
            return bad(PyExc_TypeError, "Method: keywords must be str"), NULL;
        }
        Py_INCREF(k);
        PyUnicode_InternInPlace(&k);
        PyTuple_SET_ITEM(names, j, k);
    }
    Method *self = PyObject_GC_New(Method, type);
    if (self == NULL) {
        Py_DECREF(names);
        return NULL;
    }
    self->vectorcall = method_call;
    Py_INCREF(name);
    PyUnicode_InternInPlace(&name);
    self->name = name;
    Py_INCREF(general);
    self->general = general;
    self->keywords = names;
    self->inputs = inputs;
    self->frame = frame;
    self->dict = NULL;
    self->last_ref = self->last_caller = self->last_index = NULL;
    self->last_ts = NULL;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

static PyObject *method_general(Method *self, void *closure) {
    Py_INCREF(self->general);
    return self->general;
}

static PyGetSetDef method_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"general", (getter)method_general, NULL, "The Python function every other call runs.", NULL},
    {NULL},
};

static PyTypeObject MethodType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "composedyn.dynamics.compiled._call.Method",
    .tp_basicsize = sizeof(Method),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "Method(name, general, inputs, keywords, frame=0): a Robot method whose plain calls take the "
              "robot's C caller of the quantity `name` directly (see the module source).",
    .tp_new = method_new,
    .tp_dealloc = (destructor)method_dealloc,
    .tp_traverse = (traverseproc)method_traverse,
    .tp_clear = (inquiry)method_clear,
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = method_get,
    .tp_vectorcall_offset = offsetof(Method, vectorcall),
    .tp_dictoffset = offsetof(Method, dict),
    .tp_getset = method_getset,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_call",
                                    "The C caller of composedyn's one-sample compiled entries and the Robot methods' descriptor.", -1, NULL};

PyMODINIT_FUNC PyInit__call(void) {
    import_array();
    if (PyType_Ready(&CallerType) < 0 || PyType_Ready(&MethodType) < 0) return NULL;
    str_out = PyUnicode_InternFromString("out");
    str_threads = PyUnicode_InternFromString("_threads");
    str_data = PyUnicode_InternFromString("data");
    str_frame_index = PyUnicode_InternFromString("_frame_index");
    str_world = PyUnicode_InternFromString("world");
    str_local = PyUnicode_InternFromString("local");
    int_zero = PyLong_FromLong(0);
    int_one = PyLong_FromLong(1);
    if (!str_out || !str_threads || !str_data || !str_frame_index || !str_world || !str_local || !int_zero || !int_one)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&CallerType);
    if (PyModule_AddObject(m, "Caller", (PyObject *)&CallerType) < 0) {
        Py_DECREF(&CallerType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&MethodType);
    if (PyModule_AddObject(m, "Method", (PyObject *)&MethodType) < 0) {
        Py_DECREF(&MethodType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
