/* The C caller of the one-sample entries: composedyn.dynamics.compiled._call.Lean.
 *
 * A Lean object holds the machine address of one compiled entry (a numba cfunc
 * of composedyn.dynamics.compiled.lean; all share the signature kernel_t below),
 * the robot's packed model arrays, the lengths of the entry's input vectors and
 * the shapes of its results.  Called with the input vectors (then, for some
 * entries, a float, positional or by its keyword) and, for an entry with one
 * result, optionally out=, it checks in C that each vector is a numpy float64
 * ndarray of its length in native byte order (a strided one is copied), and
 * that out is a writeable C-contiguous float64 ndarray of the result's shape
 * sharing no byte with an input (compared as address ranges) and that the float
 * argument is >= 0 (a smoothing width or a frame code; NaN is not);
 * it then calls the entry with the data pointers and returns the result (new
 * arrays unless out was given; a tuple for several results).
 *
 * Anything else -- another type, dtype, shape, byte order or keyword, an entry
 * status other than 0 (NaN or inf in an input, a singular mass matrix, a zero
 * quaternion), or the switch array reading 0 -- goes to the fallback with the
 * original arguments, and its result is returned (fallback None: the call
 * returns None).  With nan_fill, status 2 (NaN or inf in) returns the results
 * filled with NaN instead.
 *
 * The entry gets p = (model arrays, input vectors, results) as data pointers and
 * d = (rows of each model array, the input lengths, (rows, columns) of each
 * result, columns 0 for a vector).  The float argument may be given as an int
 * (an index: exact as a double).
 *
 * The point is the cost of the call: numba's dispatcher, with its type
 * resolution and array unboxing, costs more than the whole kernel of a 6-joint
 * arm; this costs a few dozen nanoseconds.  The entry runs with the GIL held.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define MAXA 3      /* model arrays, input vectors, results: at most this many each */
#define STACK 192   /* strided inputs of up to this many numbers in all are copied on the stack */

typedef int64_t (*kernel_t)(void *const *p, const int64_t *d, double s);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    kernel_t fn;
    PyObject *keep;            /* (model arrays..., switch): alive while their pointers are used */
    void *model[MAXA];
    int nmodel, nin, nout, nan_fill;
    npy_intp len[MAXA];        /* input lengths */
    npy_intp rows[MAXA], cols[MAXA];  /* result shapes, cols 0: a vector */
    int64_t d[4 * MAXA];
    npy_intp inlen;            /* sum of the input lengths */
    const int64_t *on;         /* the switch: the entry is used while *on != 0 */
    PyObject *scalar;          /* keyword name of the float argument (str), or None: no float */
    PyObject *fallback;
    PyObject *dict;            /* __doc__ and the like */
} Lean;

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

static PyObject *fall(Lean *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
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

/* Whether the bytes of the array a and of the ndarray o (any strides) may overlap: compares the
 * ranges [lowest, highest] address each touches; an input that is not an ndarray never overlaps. */
static int overlaps(PyArrayObject *a, PyObject *o) {
    if (!PyArray_Check(o)) return 0;
    PyArrayObject *b = (PyArrayObject *)o;
    char *lo[2], *hi[2];
    PyArrayObject *ab[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        PyArrayObject *x = ab[k];
        if (PyArray_SIZE(x) == 0) return 0;
        lo[k] = hi[k] = PyArray_BYTES(x);
        for (int i = 0; i < PyArray_NDIM(x); i++) {
            npy_intp span = (PyArray_DIM(x, i) - 1) * PyArray_STRIDE(x, i);
            if (span < 0) lo[k] += span; else hi[k] += span;
        }
        hi[k] += PyArray_ITEMSIZE(x);
    }
    return lo[0] < hi[1] && lo[1] < hi[0];
}

static int out_ok(Lean *self, PyObject *o) {
    if (!PyArray_CheckExact(o)) return 0;
    PyArrayObject *a = (PyArrayObject *)o;
    int ndim = self->cols[0] ? 2 : 1;
    return PyArray_TYPE(a) == NPY_DOUBLE && PyArray_ISNOTSWAPPED(a) && PyArray_IS_C_CONTIGUOUS(a)
        && PyArray_ISWRITEABLE(a) && PyArray_NDIM(a) == ndim && PyArray_DIM(a, 0) == self->rows[0]
        && (ndim == 1 || PyArray_DIM(a, 1) == self->cols[0]);
}

static PyObject *lean_call(PyObject *obj, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Lean *self = (Lean *)obj;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    int nscalar = self->scalar != Py_None, nm = self->nmodel, ni = self->nin, no = self->nout;
    void *p[3 * MAXA];
    double stack[STACK], *buf = stack, s = 0.0;
    PyObject *given = NULL, *outs[MAXA] = {NULL, NULL, NULL}, *result = NULL;
    if (!*self->on || nargs < ni || nargs > ni + nscalar) return fall(self, args, nargsf, kwnames);
    if (nargs > ni) {
        if (!number(args[ni], &s)) return fall(self, args, nargsf, kwnames);
    }
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k), *val = args[nargs + k];
        if (no == 1 && PyUnicode_CheckExact(key) && PyUnicode_CompareWithASCIIString(key, "out") == 0) {
            if (val == Py_None) continue;
            if (!out_ok(self, val)) return fall(self, args, nargsf, kwnames);
            given = val;
        } else if (!(nscalar && nargs == ni && PyUnicode_Check(key) && PyUnicode_Compare(key, self->scalar) == 0
                     && number(val, &s))) {
            return fall(self, args, nargsf, kwnames);
        }
    }
    if (nscalar && !(s >= 0.0)) return fall(self, args, nargsf, kwnames);  /* negative or NaN: refused there */
    if (given != NULL) {  /* out sharing memory with an input: the kernel would read what it writes */
        for (int k = 0; k < ni; k++)
            if (overlaps((PyArrayObject *)given, args[k])) return fall(self, args, nargsf, kwnames);
    }
    if (self->inlen > STACK) {
        buf = PyMem_Malloc(self->inlen * sizeof(double));
        if (buf == NULL) return PyErr_NoMemory();
    }
    for (int k = 0; k < nm; k++) p[k] = self->model[k];
    for (int k = 0, at = 0; k < ni; at += self->len[k], k++) {
        if (!vector(args[k], self->len[k], buf + at, &p[nm + k])) {
            result = fall(self, args, nargsf, kwnames);
            goto done;
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
        p[nm + ni + k] = PyArray_DATA((PyArrayObject *)outs[k]);
    }
    int64_t status = self->fn(p, self->d, s);
    if (status == 2 && self->nan_fill) {
        for (int k = 0; k < no; k++) {
            double *o = (double *)PyArray_DATA((PyArrayObject *)outs[k]);
            for (npy_intp i = 0, size = PyArray_SIZE((PyArrayObject *)outs[k]); i < size; i++) o[i] = NAN;
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

static int lean_traverse(Lean *self, visitproc visit, void *arg) {
    Py_VISIT(self->keep);
    Py_VISIT(self->fallback);
    Py_VISIT(self->dict);
    Py_VISIT(self->scalar);
    return 0;
}

static int lean_clear(Lean *self) {
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->dict);
    return 0;  /* keep and scalar stay until dealloc: the call reads them */
}

static void lean_dealloc(Lean *self) {
    PyObject_GC_UnTrack(self);
    lean_clear(self);
    Py_CLEAR(self->keep);
    Py_CLEAR(self->scalar);
    PyObject_GC_Del(self);
}

static int bad(PyObject *type, const char *what) {
    PyErr_SetString(type, what);
    return 0;
}

/* n non-negative ints of the tuple t (1 <= len <= MAXA) into v; with pairs, (rows, cols) tuples. */
static int sizes(PyObject *t, npy_intp *v, npy_intp *w, int *count, const char *what) {
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) < 1 || PyTuple_GET_SIZE(t) > MAXA) return bad(PyExc_ValueError, what);
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

static PyObject *lean_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *names[] = {"address", "model", "inputs", "outputs", "scalar", "nan_fill", "switch", "fallback", NULL};
    PyObject *address, *model, *inputs, *outputs, *scalar, *on, *fallback;
    int nan_fill;
    Lean tmp;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO!OOOpOO", names, &address, &PyTuple_Type, &model, &inputs,
                                     &outputs, &scalar, &nan_fill, &on, &fallback))
        return NULL;
    tmp.nmodel = (int)PyTuple_GET_SIZE(model);
    if (tmp.nmodel < 1 || tmp.nmodel > MAXA) {
        PyErr_SetString(PyExc_ValueError, "Lean: 1 to 3 model arrays");
        return NULL;
    }
    for (int k = 0; k < tmp.nmodel; k++) {
        PyObject *a = PyTuple_GET_ITEM(model, k);
        if (!PyArray_CheckExact(a) || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)a)
                || !PyArray_ISNOTSWAPPED((PyArrayObject *)a) || PyArray_NDIM((PyArrayObject *)a) < 1
                || PyArray_ISWRITEABLE((PyArrayObject *)a)) {
            /* read-only: an entry indexes with the parent column, so a model array that could change
               under it (a writeable one) is never trusted */
            PyErr_SetString(PyExc_ValueError, "Lean: the model arrays must be read-only C-contiguous ndarrays");
            return NULL;
        }
        tmp.model[k] = PyArray_DATA((PyArrayObject *)a);
    }
    if (!sizes(inputs, tmp.len, NULL, &tmp.nin, "Lean: inputs must be 1 to 3 positive lengths")
            || !sizes(outputs, tmp.rows, tmp.cols, &tmp.nout, "Lean: outputs must be 1 to 3 (rows, columns) pairs"))
        return NULL;
    if (scalar != Py_None && !PyUnicode_Check(scalar)) {
        PyErr_SetString(PyExc_TypeError, "Lean: scalar must be the float argument's name (str) or None");
        return NULL;
    }
    if (!PyArray_CheckExact(on) || PyArray_TYPE((PyArrayObject *)on) != NPY_INT64
            || PyArray_NDIM((PyArrayObject *)on) != 1 || PyArray_DIM((PyArrayObject *)on, 0) != 1) {
        PyErr_SetString(PyExc_ValueError, "Lean: switch must be an int64 array of shape (1,)");
        return NULL;
    }
    if (fallback != Py_None && !PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "Lean: fallback must be callable or None");
        return NULL;
    }
    void *fn = PyLong_AsVoidPtr(address);
    if (fn == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Lean: null entry address");
        return NULL;
    }
    PyObject *keep = PyTuple_New(tmp.nmodel + 1);
    if (keep == NULL) return NULL;
    for (int k = 0; k < tmp.nmodel; k++) {
        Py_INCREF(PyTuple_GET_ITEM(model, k));
        PyTuple_SET_ITEM(keep, k, PyTuple_GET_ITEM(model, k));
    }
    Py_INCREF(on);
    PyTuple_SET_ITEM(keep, tmp.nmodel, on);
    Lean *self = PyObject_GC_New(Lean, type);
    if (self == NULL) {
        Py_DECREF(keep);
        return NULL;
    }
    self->vectorcall = lean_call;
    self->fn = (kernel_t)fn;
    self->keep = keep;
    self->nmodel = tmp.nmodel;
    self->nin = tmp.nin;
    self->nout = tmp.nout;
    self->nan_fill = nan_fill;
    self->inlen = 0;
    int at = 0;
    for (int k = 0; k < tmp.nmodel; k++) self->d[at++] = PyArray_DIM((PyArrayObject *)PyTuple_GET_ITEM(model, k), 0);
    for (int k = 0; k < MAXA; k++) {
        self->model[k] = k < tmp.nmodel ? tmp.model[k] : NULL;
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
    Py_INCREF(scalar);
    self->scalar = scalar;
    Py_INCREF(fallback);
    self->fallback = fallback;
    self->dict = NULL;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

static PyObject *lean_fallback(Lean *self, void *closure) {
    Py_INCREF(self->fallback);
    return self->fallback;
}

static PyGetSetDef lean_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"fallback", (getter)lean_fallback, NULL, "What the call returns when it cannot serve the arguments.", NULL},
    {NULL},
};

static PyTypeObject LeanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "composedyn.dynamics.compiled._call.Lean",
    .tp_basicsize = sizeof(Lean),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Lean(address, model, inputs, outputs, scalar, nan_fill, switch, fallback): a compiled "
              "one-sample entry called from Python without numba's dispatch (see the module source).",
    .tp_new = lean_new,
    .tp_dealloc = (destructor)lean_dealloc,
    .tp_traverse = (traverseproc)lean_traverse,
    .tp_clear = (inquiry)lean_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Lean, vectorcall),
    .tp_dictoffset = offsetof(Lean, dict),
    .tp_getset = lean_getset,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_call",
                                    "The C caller of composedyn's one-sample compiled entries.", -1, NULL};

PyMODINIT_FUNC PyInit__call(void) {
    import_array();
    if (PyType_Ready(&LeanType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&LeanType);
    if (PyModule_AddObject(m, "Lean", (PyObject *)&LeanType) < 0) {
        Py_DECREF(&LeanType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
