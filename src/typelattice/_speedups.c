/*
 * typelattice._speedups: C fast paths for result_type, lattice_result_type
 * and promote_types (typelattice._promotion), and for the binary elementwise
 * functions and operators of typelattice.numpy (FastElementwise, further down).
 *
 * A fast path does only what its Python function does before the first cache
 * miss: read the scoped configuration (the ContextVar _config._scope), take
 * the memo dict in force (the global state's, which _promotion pushes here
 * with set_global_memos, or the scoped state's), build the same key and
 * return the cached entry. Everything else -- a miss, an unusual call, an
 * entry of an unexpected shape -- is handed to the Python function itself,
 * with the arguments exactly as given, so the promotion logic stays in
 * Python and every answer, warning and error is the Python one.
 *
 * Errors raised by the steps mirrored here are handled as the Python code
 * handles them: propagated by result_type and lattice_result_type, and for
 * promote_types a KeyError or TypeError from the lookup means "not cached".
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <structmember.h> /* T_OBJECT_EX: the slots of __slots__ */

#ifdef Py_GIL_DISABLED
/* The lookups below hold borrowed references from dicts, which is only safe
   under the GIL. The extension is optional: this build uses pure Python. */
#error "typelattice._speedups needs the GIL"
#endif

/* Bumped whenever the interface _promotion uses changes, so a stale build
   (an editable install compiled from older sources) is ignored. */
#define API_VERSION 7

enum kind { RESULT_TYPE, LATTICE_RESULT_TYPE, PROMOTE_TYPES };

static const char *const kind_names[] = {
    "result_type",
    "lattice_result_type",
    "promote_types",
};

/* Set by configure(): _config._scope, numpy.ndarray, numpy.generic and
   numpy.dtype. */
static PyObject *scope_var;
static PyObject *ndarray_type;
static PyTypeObject *generic_type;
static PyTypeObject *dtype_type;
/* Set by configure_binary(): ArrayImpl and the offsets of its _value and _key
   slots. */
static PyTypeObject *array_type;
static Py_ssize_t value_offset;
static Py_ssize_t key_offset;
/* Set by set_global_memos(): the global state's memo and promotion_memo. */
static PyObject *global_memo;
static PyObject *global_promotion_memo;
static PyObject *global_state; /* the global _config.State */

static PyObject *str_resolve;
static PyObject *str_memo;
static PyObject *str_promotion_memo;
static PyObject *str_dtype;
static PyObject *str_flag;
static PyObject *str_qualname;
static PyObject *str_promotion_key;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fallback; /* the Python function */
    PyObject *dict;     /* __dict__: __name__, __doc__, __wrapped__... */
    int kind;
} FastPath;

static PyObject *
fall_back(FastPath *self, PyObject *const *args, size_t nargsf,
          PyObject *kwnames)
{
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

/* The configuration state in force here (the global one, or the scope's
 * scope.resolve()) as a new reference; *global says which. NULL with an
 * exception set when a step failed; NULL without one when not configured,
 * which means "ask Python". */
static PyObject *
state_in_force(int *global)
{
    PyObject *scope = NULL;
    PyObject *state;

    if (scope_var == NULL || global_state == NULL) {
        return NULL;
    }
    if (PyContextVar_Get(scope_var, NULL, &scope) < 0) {
        return NULL;
    }
    if (scope == NULL) { /* no value and no default: not ours to explain */
        return NULL;
    }
    *global = scope == Py_None;
    if (*global) {
        Py_DECREF(scope);
        return Py_NewRef(global_state);
    }
    state = PyObject_CallMethodNoArgs(scope, str_resolve);
    Py_DECREF(scope);
    return state;
}

/* The memo in force here, as a new reference: the global one, or the
 * attribute `name` of the scoped state. NULL with an exception set when a
 * step failed; NULL without one when there is nothing to look up in (not
 * configured, or not a dict), which means "ask Python". */
static PyObject *
memo_in_force(PyObject *global, PyObject *name)
{
    PyObject *state;
    PyObject *memo;
    int is_global;

    if (global == NULL) {
        return NULL;
    }
    state = state_in_force(&is_global);
    if (state == NULL) {
        return NULL;
    }
    if (is_global) {
        Py_DECREF(state);
        return Py_NewRef(global);
    }
    memo = PyObject_GetAttr(state, name);
    Py_DECREF(state);
    if (memo == NULL) {
        return NULL;
    }
    if (!PyDict_CheckExact(memo)) {
        Py_DECREF(memo);
        return NULL;
    }
    return memo;
}

/* memo.get(key) as a new reference; a stored None counts as a miss, as in
 * `if entry is None`. NULL, with or without an exception. */
static PyObject *
memo_get(PyObject *memo, PyObject *key)
{
    PyObject *entry = PyDict_GetItemWithError(memo, key);

    if (entry == NULL || entry == Py_None) {
        return NULL;
    }
    return Py_NewRef(entry);
}

/* The key _promotion._arg_key gives x, as a new reference; NULL (never
 * with an exception) when it has none here: Python decides. The same rules
 * in the same order: a Python or NumPy scalar (or scalar type: same key) is
 * keyed by its type, an ndarray or a dtype by its DType class, a string, a
 * class or None by itself, anything else by its _promotion_key, which an
 * ArrayImpl keeps in its _key slot. */
/*
 * A dict's stamp: a number that changes whenever the dict changes, so that
 * a value found in it may be kept, with the stamp the dict had, and used
 * again without a lookup while the stamp is unchanged. Before Python 3.12
 * it is the dict's version tag (unique among all dicts' versions); from
 * 3.12 on, a count of the changes of every dict watched (PyDict_Watch) by
 * this module, the dict included (dict_stamp(d, 1) starts watching d): any
 * change, or the dict's end, moves it. 0 is no stamp (the dict could not
 * be watched): it never equals a dict's stamp.
 */
#if PY_VERSION_HEX < 0x030C0000
static unsigned long long
dict_stamp(PyObject *d, int watch)
{
    (void)watch;
    return ((PyDictObject *)d)->ma_version_tag;
}
#else
static int stamp_watcher = -2; /* -2: not added yet; -1: none to be had */
static unsigned long long stamp_changes = 1;

static int
stamp_dict_changed(PyDict_WatchEvent event, PyObject *d, PyObject *key,
                   PyObject *new_value)
{
    (void)event;
    (void)d;
    (void)key;
    (void)new_value;
    stamp_changes++;
    return 0;
}

static unsigned long long
dict_stamp(PyObject *d, int watch)
{
    if (watch) {
        if (stamp_watcher == -2) {
            stamp_watcher = PyDict_AddWatcher(stamp_dict_changed);
            if (stamp_watcher < 0) {
                PyErr_Clear();
                stamp_watcher = -1;
            }
        }
        if (stamp_watcher < 0) {
            return 0;
        }
        if (PyDict_Watch(stamp_watcher, d) < 0) {
            PyErr_Clear();
            return 0;
        }
    }
    return stamp_changes;
}
#endif

static PyObject *
arg_key(PyObject *x)
{
    PyTypeObject *t = Py_TYPE(x);
    PyObject *key;

    if (t == &PyLong_Type || t == &PyFloat_Type || t == &PyBool_Type ||
        t == &PyComplex_Type || PyType_IsSubtype(t, generic_type)) {
        return Py_NewRef((PyObject *)t);
    }
    if ((PyObject *)t == ndarray_type) {
        PyObject *dtype = PyObject_GetAttr(x, str_dtype);
        if (dtype == NULL) {
            PyErr_Clear();
            return NULL;
        }
        key = Py_NewRef((PyObject *)Py_TYPE(dtype));
        Py_DECREF(dtype);
        return key;
    }
    if (PyType_IsSubtype(t, dtype_type)) {
        return Py_NewRef((PyObject *)t);
    }
    if (t == &PyUnicode_Type || t == &PyType_Type || x == Py_None) {
        return Py_NewRef(x);
    }
    if (t == array_type) {
        key = *(PyObject **)((char *)x + key_offset);
        return key == NULL ? NULL : Py_NewRef(key);
    }
    /* getattr(x, "_promotion_key", None); an error is Python's to raise
       (or not) when it asks the same. */
    key = PyObject_GetAttr(x, str_promotion_key);
    if (key == NULL) {
        PyErr_Clear();
        return NULL;
    }
    if (key == Py_None) {
        Py_DECREF(key);
        return NULL;
    }
    return key;
}

/* The cached entry for result_type(*args), under the key _promotion._cached
 * stores it under: the tuple of arg_key. (Python looks first under the
 * tuple of the arguments' types, which is the same key when every argument
 * is a Python or NumPy scalar or a dtype, and holds nothing otherwise: no
 * stored key has str, type, NoneType or an array type in it.) NULL with an
 * exception (an error finding the memo in force) or without one (a miss,
 * or Python's to decide). */
static PyObject *
cached_entry(PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *memo;
    PyObject *key;
    PyObject *entry;
    Py_ssize_t i;

    memo = memo_in_force(global_memo, str_memo);
    if (memo == NULL) {
        return NULL;
    }
    key = PyTuple_New(nargs);
    if (key == NULL) {
        Py_DECREF(memo);
        return NULL;
    }
    for (i = 0; i < nargs; i++) {
        PyObject *k = arg_key(args[i]);
        if (k == NULL) {
            Py_DECREF(key);
            Py_DECREF(memo);
            return NULL;
        }
        PyTuple_SET_ITEM(key, i, k);
    }
    entry = memo_get(memo, key);
    if (entry == NULL) {
        /* A _promotion_key that cannot be hashed: Python handles it. */
        PyErr_Clear();
    }
    Py_DECREF(key);
    Py_DECREF(memo);
    return entry;
}

static int
is_flag_name(PyObject *name)
{
    return name == str_flag ||
           (PyUnicode_CheckExact(name) &&
            PyUnicode_Compare(name, str_flag) == 0);
}

/* result_type and lattice_result_type: entries are
 * (public dtype, weak, operation dtype). */
static PyObject *
result_type_vectorcall(FastPath *self, PyObject *const *args, size_t nargsf,
                       PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    int with_flag = 0;
    PyObject *entry;
    PyObject *out;

    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0) {
        PyObject *value = args[nargs];
        /* Only result_type(..., return_weak_type_flag=<a bool>); anything
           else (other names, truthy non-bools) is Python's to handle. */
        if (self->kind != RESULT_TYPE || PyTuple_GET_SIZE(kwnames) != 1 ||
            !is_flag_name(PyTuple_GET_ITEM(kwnames, 0)) ||
            (value != Py_True && value != Py_False)) {
            return fall_back(self, args, nargsf, kwnames);
        }
        with_flag = value == Py_True;
    }
    entry = cached_entry(args, nargs);
    if (entry == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        return fall_back(self, args, nargsf, kwnames);
    }
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 3) {
        Py_DECREF(entry);
        return fall_back(self, args, nargsf, kwnames);
    }
    if (self->kind == LATTICE_RESULT_TYPE) {
        out = PyTuple_Pack(2, PyTuple_GET_ITEM(entry, 2),
                           PyTuple_GET_ITEM(entry, 1));
    }
    else if (with_flag) {
        out = PyTuple_Pack(2, PyTuple_GET_ITEM(entry, 0),
                           PyTuple_GET_ITEM(entry, 1));
    }
    else {
        out = Py_NewRef(PyTuple_GET_ITEM(entry, 0));
    }
    Py_DECREF(entry);
    return out;
}

/* promote_types(a, b): promotion_memo[(a, b)]. */
static PyObject *
promote_types_vectorcall(FastPath *self, PyObject *const *args,
                         size_t nargsf, PyObject *kwnames)
{
    PyObject *memo;
    PyObject *key;
    PyObject *found;

    if (PyVectorcall_NARGS(nargsf) != 2 ||
        (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        return fall_back(self, args, nargsf, kwnames);
    }
    memo = memo_in_force(global_promotion_memo, str_promotion_memo);
    if (memo != NULL) {
        key = PyTuple_Pack(2, args[0], args[1]);
        if (key == NULL) {
            Py_DECREF(memo);
            return NULL;
        }
        found = PyDict_GetItemWithError(memo, key);
        Py_XINCREF(found);
        Py_DECREF(key);
        Py_DECREF(memo);
        if (found != NULL) {
            return found;
        }
    }
    if (PyErr_Occurred()) {
        /* The Python function catches these two around the lookup. */
        if (!PyErr_ExceptionMatches(PyExc_KeyError) &&
            !PyErr_ExceptionMatches(PyExc_TypeError)) {
            return NULL;
        }
        PyErr_Clear();
    }
    return fall_back(self, args, nargsf, kwnames);
}

/* -- the FastPath type ------------------------------------------------------ */

static PyObject *
FastPath_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"kind", "fallback", NULL};
    const char *kind_name;
    PyObject *fallback;
    FastPath *self;
    int kind;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "sO:FastPath", keywords,
                                     &kind_name, &fallback)) {
        return NULL;
    }
    for (kind = 0; kind < 3; kind++) {
        if (strcmp(kind_name, kind_names[kind]) == 0) {
            break;
        }
    }
    if (kind == 3) {
        PyErr_Format(PyExc_ValueError,
                     "kind must be 'result_type', 'lattice_result_type' or "
                     "'promote_types', not '%s'",
                     kind_name);
        return NULL;
    }
    if (!PyCallable_Check(fallback)) {
        PyErr_Format(PyExc_TypeError, "fallback must be callable, not %R",
                     fallback);
        return NULL;
    }
    self = (FastPath *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->kind = kind;
    self->fallback = Py_NewRef(fallback);
    self->dict = NULL;
    self->vectorcall = kind == PROMOTE_TYPES
                           ? (vectorcallfunc)promote_types_vectorcall
                           : (vectorcallfunc)result_type_vectorcall;
    return (PyObject *)self;
}

static int
FastPath_traverse(FastPath *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fallback);
    Py_VISIT(self->dict);
    return 0;
}

static int
FastPath_clear(FastPath *self)
{
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->dict);
    return 0;
}

static void
FastPath_dealloc(FastPath *self)
{
    PyObject_GC_UnTrack(self);
    FastPath_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
FastPath_repr(FastPath *self)
{
    return PyUnicode_FromFormat("<C fast path of %R>", self->fallback);
}

/* Pickled by name, like the function it stands for. */
static PyObject *
FastPath_reduce(FastPath *self, PyObject *Py_UNUSED(ignored))
{
    return PyObject_GetAttr((PyObject *)self, str_qualname);
}

static PyObject *
FastPath_get_fallback(FastPath *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(self->fallback);
}

static PyObject *
FastPath_get_kind(FastPath *self, void *Py_UNUSED(closure))
{
    return PyUnicode_FromString(kind_names[self->kind]);
}

static PyMethodDef FastPath_methods[] = {
    {"__reduce__", (PyCFunction)FastPath_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef FastPath_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"fallback", (getter)FastPath_get_fallback, NULL,
     "The Python function called on a cache miss.", NULL},
    {"kind", (getter)FastPath_get_kind, NULL,
     "Which lookup this is: 'result_type', 'lattice_result_type' or "
     "'promote_types'.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject FastPath_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "typelattice._speedups.FastPath",
    .tp_basicsize = sizeof(FastPath),
    .tp_dealloc = (destructor)FastPath_dealloc,
    .tp_vectorcall_offset = offsetof(FastPath, vectorcall),
    .tp_repr = (reprfunc)FastPath_repr,
    .tp_call = PyVectorcall_Call,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
                Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = PyDoc_STR(
        "FastPath(kind, fallback)\n--\n\n"
        "A callable that answers from typelattice's promotion memos and calls "
        "fallback, with the same arguments, whenever it cannot."),
    .tp_traverse = (traverseproc)FastPath_traverse,
    .tp_clear = (inquiry)FastPath_clear,
    .tp_methods = FastPath_methods,
    .tp_getset = FastPath_getset,
    .tp_dictoffset = offsetof(FastPath, dict),
    .tp_new = FastPath_new,
};

/* -- reading ndarrays ------------------------------------------------------ */

/*
 * The head of NumPy's ndarray object (PyArrayObject_fields in NumPy's
 * ndarraytypes.h, the same in NumPy 1.x and 2.x): the extension is built
 * without NumPy's headers, so it spells out the fields it reads. Reading
 * them directly costs a load where the attributes (shape, dtype,
 * flags.owndata) cost lookups and new objects. configure_bind checks the
 * layout against those attributes on arrays it makes (one that owns its
 * memory, a view) and sets ndarray_layout only when every field agrees;
 * otherwise the attributes are read. Only ever applied to objects whose type
 * is exactly numpy.ndarray.
 */
typedef struct {
    PyObject_HEAD
    char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr;
    int flags;
} NdarrayHead;

#define NDARRAY_OWNDATA 0x0004 /* NPY_ARRAY_OWNDATA */

/* numpy.ndarray once the fields above were checked (configure_bind) */
static PyTypeObject *ndarray_layout;
#define HEAD_OF(a) (Py_TYPE(a) == ndarray_layout ? (NdarrayHead *)(a) : NULL)
static PyObject *str_flags;
static PyObject *str_owndata;
static PyObject *str_shape;
static PyObject *str_base;

/* a.flags.owndata of the ndarray a (exactly one). -1: error. */
static int
ndarray_owns_data(PyObject *a)
{
    NdarrayHead *head = HEAD_OF(a);
    PyObject *flags, *owndata;
    int owns;

    if (head != NULL) {
        return (head->flags & NDARRAY_OWNDATA) != 0;
    }
    flags = PyObject_GetAttr(a, str_flags);
    if (flags == NULL) {
        return -1;
    }
    owndata = PyObject_GetAttr(flags, str_owndata);
    Py_DECREF(flags);
    if (owndata == NULL) {
        return -1;
    }
    owns = PyObject_IsTrue(owndata);
    Py_DECREF(owndata);
    return owns;
}

/* a.dtype of the ndarray a (exactly one), a new reference. */
static PyObject *
ndarray_dtype(PyObject *a)
{
    NdarrayHead *head = HEAD_OF(a);

    if (head != NULL) {
        return Py_NewRef(head->descr);
    }
    return PyObject_GetAttr(a, str_dtype);
}

/* a.shape of the ndarray a (exactly one), a new reference. */
static PyObject *
ndarray_shape(PyObject *a)
{
    NdarrayHead *head = HEAD_OF(a);
    PyObject *shape;
    int i;

    if (head == NULL) {
        return PyObject_GetAttr(a, str_shape);
    }
    shape = PyTuple_New(head->nd);
    if (shape == NULL) {
        return NULL;
    }
    for (i = 0; i < head->nd; i++) {
        PyObject *d = PyLong_FromSsize_t(head->dimensions[i]);

        if (d == NULL) {
            Py_DECREF(shape);
            return NULL;
        }
        PyTuple_SET_ITEM(shape, i, d);
    }
    return shape;
}

/* Whether the ndarray a's shape is the tuple of ints shape (exactly one).
 * -1: error. */
static int
ndarray_has_shape(PyObject *a, PyObject *shape)
{
    NdarrayHead *head = HEAD_OF(a);
    PyObject *own;
    Py_ssize_t i;
    int same;

    if (!PyTuple_CheckExact(shape)) {
        return 0;
    }
    if (head != NULL) {
        if (PyTuple_GET_SIZE(shape) != head->nd) {
            return 0;
        }
        for (i = 0; i < head->nd; i++) {
            PyObject *d = PyTuple_GET_ITEM(shape, i);
            Py_ssize_t v;

            if (!PyLong_CheckExact(d)) {
                return 0;
            }
            v = PyLong_AsSsize_t(d);
            if (v == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                return 0;
            }
            if (v != head->dimensions[i]) {
                return 0;
            }
        }
        return 1;
    }
    own = PyObject_GetAttr(a, str_shape);
    if (own == NULL) {
        return -1;
    }
    same = PyObject_RichCompareBool(own, shape, Py_EQ);
    Py_DECREF(own);
    return same;
}

/* Whether the fields of NdarrayHead read from the ndarray a give its
 * attributes (shape, dtype, flags.owndata, base). -1: error. */
static int
ndarray_layout_agrees(PyObject *a)
{
    NdarrayHead *head = (NdarrayHead *)a;
    PyObject *shape, *dtype, *flags, *owndata, *base;
    Py_ssize_t i;
    int ok;

    shape = PyObject_GetAttr(a, str_shape);
    dtype = PyObject_GetAttr(a, str_dtype);
    flags = PyObject_GetAttr(a, str_flags);
    owndata = flags == NULL ? NULL : PyObject_GetAttr(flags, str_owndata);
    base = PyObject_GetAttr(a, str_base);
    ok = shape != NULL && dtype != NULL && owndata != NULL && base != NULL &&
         PyTuple_CheckExact(shape) && PyTuple_GET_SIZE(shape) == head->nd &&
         dtype == head->descr &&
         ((head->flags & NDARRAY_OWNDATA) != 0) == (owndata == Py_True) &&
         (base == Py_None ? head->base == NULL : head->base == base);
    for (i = 0; ok && i < head->nd; i++) {
        ok = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i)) ==
             head->dimensions[i];
    }
    Py_XDECREF(shape);
    Py_XDECREF(dtype);
    Py_XDECREF(flags);
    Py_XDECREF(owndata);
    Py_XDECREF(base);
    if (PyErr_Occurred()) {
        return -1;
    }
    return ok;
}

/* Set ndarray_layout when the layout agrees with the attributes of an
 * array of ndarray (a type: numpy.ndarray) that owns its memory and of a
 * view of it. */
static int
check_ndarray_layout(PyObject *ndarray)
{
    PyObject *owner, *view, *slice, *one;
    int ok = 0;

    ndarray_layout = NULL;
    owner = PyObject_CallFunction(ndarray, "((nn)s)", (Py_ssize_t)3,
                                  (Py_ssize_t)5, "f4");
    if (owner == NULL) {
        return -1;
    }
    one = PyLong_FromLong(1);
    slice = one == NULL ? NULL : PySlice_New(one, Py_None, NULL);
    view = slice == NULL ? NULL : PyObject_GetItem(owner, slice);
    if (view != NULL && Py_TYPE(owner) == (PyTypeObject *)ndarray &&
        Py_TYPE(view) == (PyTypeObject *)ndarray) {
        ok = ndarray_layout_agrees(owner);
        if (ok == 1) {
            ok = ndarray_layout_agrees(view);
        }
        if (ok == 1) {
            ok = ((NdarrayHead *)owner)->flags & NDARRAY_OWNDATA &&
                 !(((NdarrayHead *)view)->flags & NDARRAY_OWNDATA) &&
                 ((NdarrayHead *)view)->dimensions[0] == 2;
        }
    }
    Py_DECREF(owner);
    Py_XDECREF(one);
    Py_XDECREF(slice);
    Py_XDECREF(view);
    if (PyErr_Occurred()) {
        return -1;
    }
    ndarray_layout = ok == 1 ? (PyTypeObject *)ndarray : NULL;
    return 0;
}

/* -- elementwise functions -------------------------------------------- */

/*
 * FastElementwise(op, fallback, swap=False) runs the hot path of a unary or
 * binary elementwise function of typelattice.numpy (_elementwise.make_unary,
 * make_binary) for the common operands: arrays (exactly ArrayImpl) and
 * Python scalars, with a cached plan and (binary) rank promotion allowed. It
 * reads the plan the Python code built -- an _elementwise.Plan (fn, convs,
 * out_key, fp, cd), with a Conv (how, lo, hi) per operand; fn is the plain
 * NumPy function of the one primitive the Python code binds for these
 * dtypes, or None (then Python runs the call) -- and does what the Python
 * code does with it; the conversions that can raise call the
 * Python helpers themselves. Where an operand is a temporary that nothing
 * else can see, the result goes into its buffer (see "reusing the buffers of
 * temporaries"). Anything else -- another operand type (tracers, lists, NumPy
 * arrays), a missing plan, a rank_promotion check, a ValueError from a binary
 * NumPy call (whose message Python rewrites) -- is handed to fallback with
 * the arguments exactly as given.
 *
 * With swap, the arguments are (self, other) of a reflected operator
 * (__radd__): the function is applied to (other, self). The type is a
 * method descriptor, so an instance can be an ArrayImpl operator.
 */

/* How an operand reaches the compute dtype: _elementwise.Conversion, which
 * checks at import that CONVERSIONS (built from this enum) names the same
 * codes. CHECK: an array whose values may not all convert; the Python
 * checker reads them (and raises), then the ufunc casts it as for CAST. */
enum conversion {
    KEEP = 0,
    CAST = 1,
    INT = 2,
    SCALAR = 3,
    WEAK = 4,
    CHECK = 5,
};
static const struct {
    const char *name;
    enum conversion code;
} conversions[] = {
    {"KEEP", KEEP},     {"CAST", CAST}, {"INT", INT},
    {"SCALAR", SCALAR}, {"WEAK", WEAK}, {"CHECK", CHECK},
};

/* Set by configure_binary(). */
/* _backends.IN_USE (set by configure_bind): while another backend than
 * NumPy's is in force anywhere, the plans (which hold NumPy's functions)
 * are not run in C: the Python path binds the primitives. */
static PyObject *bind_backends;

static int
other_backend_in_force(void)
{
    return bind_backends != NULL && PyList_GET_SIZE(bind_backends) != 0;
}

static PyObject *fp_var;    /* NumPy's error-state ContextVar */
static PyObject *fp_ignore; /* its value with every warning off */
static PyObject *scalar_to; /* _core.python_scalar_to(value, dtype, name) */
static PyObject *weak_to;   /* _core.weak_to(value, dtype, name) */
/* _core.check_operand(value, dtype, name, pos) */
static PyObject *check_operand;
static PyObject *cast_call; /* _elementwise._cast_call(fn, x, y, dtype) */
static PyObject *finish;    /* _elementwise.finish(out, out_key) */
static PyObject *asarray;   /* numpy.asarray(value, dtype) */
/* Set by set_global_memos(): rank_promotion == 'allow' globally. */
static int global_rank_allow;

static PyObject *str_rank_promotion;
static PyObject *str_allow;
static PyObject *str_name;
static PyObject *str_nin;

/* A plan a binary function last found in a memo dict, for the operand keys
 * kx and ky (ArrayImpl keys or Python scalar types): while the dict's stamp
 * is unchanged, the dict holds it under (op, kx, ky) still. */
#define PLAN_SLOTS 4
typedef struct {
    PyObject *kx; /* NULL: an empty slot */
    PyObject *ky;
    PyObject *plan;
    PyObject *memo; /* (borrowed: compared) */
    unsigned long long stamp;
} PlanSlot;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fallback; /* called with the arguments as given */
    PyObject *dict;
    PyObject *op;   /* the _elementwise.Op: the plan cache key */
    PyObject *name; /* op.name, for the messages of the conversions */
    int swap;
    PlanSlot plans[PLAN_SLOTS];
} FastElementwise;

static PyObject *str_astype;

/* The plan memo holds under (op, kx, ky), or (op, kx) when ky is NULL: the
 * one in self's slot, found there last while memo is unchanged since, else
 * looked up (and kept in the slot). A new reference; NULL with an
 * exception: error; NULL without one: none. */
static PyObject *
memo_plan(FastElementwise *self, PyObject *memo, PyObject *kx, PyObject *ky)
{
    PlanSlot *slot =
        &self->plans[(((size_t)kx >> 4) ^ ((size_t)ky >> 6)) % PLAN_SLOTS];
    PyObject *key, *plan;
    unsigned long long stamp;

    if (slot->kx == kx && slot->ky == ky && slot->memo == memo &&
        slot->stamp != 0 && slot->stamp == dict_stamp(memo, 0)) {
        return Py_NewRef(slot->plan);
    }
    /* (taken first: any change from here on moves it) */
    stamp = dict_stamp(memo, 1);
    key = ky == NULL ? PyTuple_Pack(2, self->op, kx)
                     : PyTuple_Pack(3, self->op, kx, ky);
    if (key == NULL) {
        return NULL;
    }
    plan = PyDict_GetItemWithError(memo, key);
    Py_DECREF(key);
    if (plan == NULL) {
        return NULL;
    }
    Py_INCREF(plan);
    Py_XSETREF(slot->kx, Py_NewRef(kx));
    Py_XSETREF(slot->ky, Py_XNewRef(ky));
    Py_XSETREF(slot->plan, Py_NewRef(plan));
    slot->memo = memo;
    slot->stamp = stamp;
    return plan;
}

/* The value and key of an ArrayImpl or a Python scalar (borrowed); 0 for
 * any other operand. */
static int
binary_operand(PyObject *x, PyObject **value, PyObject **key)
{
    PyTypeObject *t = Py_TYPE(x);

    if (t == array_type) {
        *value = *(PyObject **)((char *)x + value_offset);
        *key = *(PyObject **)((char *)x + key_offset);
        return *value != NULL && *key != NULL;
    }
    if (t == &PyLong_Type || t == &PyFloat_Type || t == &PyComplex_Type ||
        t == &PyBool_Type) {
        *value = x;
        *key = (PyObject *)t;
        return 1;
    }
    return 0;
}

/* The memo of the configuration in force, as a new reference, when its
 * rank_promotion is 'allow'. 1: found; 0: ask Python; -1: error. */
static int
binary_memo(PyObject **memo)
{
    PyObject *state;
    PyObject *rank;
    int is_global;
    int allow;

    state = state_in_force(&is_global);
    if (state == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    if (is_global) {
        Py_DECREF(state);
        if (!global_rank_allow) {
            return 0;
        }
        *memo = Py_NewRef(global_memo);
        return 1;
    }
    rank = PyObject_GetAttr(state, str_rank_promotion);
    if (rank == NULL) {
        Py_DECREF(state);
        return -1;
    }
    allow = rank == str_allow || (PyUnicode_CheckExact(rank) &&
                                  PyUnicode_Compare(rank, str_allow) == 0);
    Py_DECREF(rank);
    if (!allow) {
        Py_DECREF(state);
        return 0;
    }
    *memo = PyObject_GetAttr(state, str_memo);
    Py_DECREF(state);
    if (*memo == NULL) {
        return -1;
    }
    if (!PyDict_CheckExact(*memo)) {
        Py_CLEAR(*memo);
        return 0;
    }
    return 1;
}

static PyObject *
call3(PyObject *fn, PyObject *a, PyObject *b, PyObject *c)
{
    PyObject *args[3] = {a, b, c};
    return PyObject_Vectorcall(fn, args, 3, NULL);
}

/* An ordinary int within [lo, hi] (Python ints of a plan); 0 when unsure. */
static int
int_in_range(PyObject *value, PyObject *lo, PyObject *hi)
{
    int overflow;
    long long v, bound;

    v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    bound = PyLong_AsLongLongAndOverflow(lo, &overflow);
    if (overflow || (bound == -1 && PyErr_Occurred()) || v < bound) {
        PyErr_Clear();
        return 0;
    }
    bound = PyLong_AsLongLongAndOverflow(hi, &overflow);
    if (overflow > 0) { /* hi beyond long long: v is below it */
        return 1;
    }
    if (overflow || (bound == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    return v <= bound;
}

/* A Python float or int that converts to a floating dtype without
 * overflow: its magnitude is at most bound, the dtype's largest finite
 * value, which the plan gives for such conversions (else 0). Non-finite
 * floats stay what they are. 0 when unsure. */
static int
scalar_fits(PyObject *value, PyObject *bound)
{
    double v;

    if (!PyFloat_CheckExact(bound) || PyFloat_AS_DOUBLE(bound) <= 0.0) {
        return 0;
    }
    if (PyFloat_CheckExact(value)) {
        v = PyFloat_AS_DOUBLE(value);
        return !isfinite(v) || fabs(v) <= PyFloat_AS_DOUBLE(bound);
    }
    if (PyLong_CheckExact(value)) {
        v = PyLong_AsDouble(value);
        if (v == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        return fabs(v) <= PyFloat_AS_DOUBLE(bound);
    }
    return 0;
}

/* The array operand at position pos, of a dtype that may not convert to cd
 * without a loss, checked by the Python checker: a new reference to what
 * the ufunc gets (the array, or a view of cd), NULL with its error. */
static PyObject *
checked_operand(FastElementwise *self, PyObject *value, PyObject *cd,
                int pos)
{
    PyObject *where = PyLong_FromLong(pos);
    PyObject *args[4] = {value, cd, self->name, where};
    PyObject *out;

    if (where == NULL) {
        return NULL;
    }
    out = PyObject_Vectorcall(check_operand, args, 4, NULL);
    Py_DECREF(where);
    return out;
}

/* A plan's Conv: a tuple (how, lo, hi) with an int code. */
static int
is_conv(PyObject *conv)
{
    return PyTuple_Check(conv) && PyTuple_GET_SIZE(conv) == 3 &&
           PyLong_Check(PyTuple_GET_ITEM(conv, 0));
}

/* One operand (at position pos) converted as its plan entry says, into *out
 * (a new reference); *cast is set for an array the ufunc converts itself.
 * 1: done; 0: ask Python (nothing raised); -1: error. */
/*
 * The 0-d arrays of Python scalars converted again and again for binary
 * ufuncs (x + 2, x * 0.5...): numpy.asarray(value, cd), kept read-only in a
 * table of SCALAR_SLOTS entries indexed by a hash of the value's bits (an
 * int's value, a float's bits: -0.0 and 0.0, or two nans, are told apart),
 * its Python type and the dtype. A value is kept when it is seen a second
 * time in its slot; values seen once cost no more than a plain conversion.
 * Only a ufunc's operand is ever given one (see binary_run): a ufunc reads
 * its operands and never returns one, so no result holds a shared array.
 */
#define SCALAR_SLOTS 64
typedef struct {
    PyObject *cd;            /* the dtype (a strong reference); NULL: empty */
    PyTypeObject *type;      /* int or float */
    unsigned long long bits; /* the value */
    PyObject *array;         /* its read-only 0-d array, once seen twice */
} SharedScalar;
static SharedScalar shared_scalars[SCALAR_SLOTS];
static PyTypeObject *ufunc_type; /* numpy.ufunc */
static PyObject *str_writeable;

/* numpy.asarray(value, cd) of the exact Python int or float value, from
 * shared_scalars or made (and kept, read-only, when seen a second time);
 * a new reference. NULL without an exception: not kept here, convert it. */
static PyObject *
shared_scalar(PyObject *value, PyObject *cd)
{
    PyTypeObject *t = Py_TYPE(value);
    unsigned long long bits, h;
    SharedScalar *e;
    PyObject *array, *flags;
    int again, rc;

    if (t == &PyFloat_Type) {
        double v = PyFloat_AS_DOUBLE(value);

        memcpy(&bits, &v, sizeof bits);
    }
    else if (t == &PyLong_Type) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(value, &overflow);

        if (overflow || (v == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return NULL;
        }
        bits = (unsigned long long)v;
    }
    else {
        return NULL;
    }
    h = (bits ^ ((unsigned long long)(size_t)cd >> 4) ^
         ((unsigned long long)(size_t)t >> 4)) *
        0x9E3779B97F4A7C15ull;
    e = &shared_scalars[h >> 58];
    again = e->cd == cd && e->type == t && e->bits == bits;
    if (again && e->array != NULL) {
        return Py_NewRef(e->array);
    }
    {
        PyObject *args[2] = {value, cd};

        array = PyObject_Vectorcall(asarray, args, 2, NULL);
    }
    if (array == NULL) {
        return NULL;
    }
    if (!again) { /* the first time here: remembered, not kept */
        Py_XSETREF(e->cd, Py_NewRef(cd));
        e->type = t;
        e->bits = bits;
        Py_CLEAR(e->array);
        return array;
    }
    if (Py_TYPE(array) != (PyTypeObject *)ndarray_type) {
        return array;
    }
    flags = PyObject_GetAttr(array, str_flags);
    if (flags == NULL) {
        Py_DECREF(array);
        return NULL;
    }
    rc = PyObject_SetAttr(flags, str_writeable, Py_False);
    Py_DECREF(flags);
    if (rc < 0) {
        Py_DECREF(array);
        return NULL;
    }
    if (e->cd == cd && e->type == t && e->bits == bits && e->array == NULL) {
        e->array = Py_NewRef(array); /* (still this value's slot) */
    }
    return array;
}

static int
binary_convert(FastElementwise *self, PyObject *conv, PyObject *value,
               PyObject *cd, int pos, PyObject **out, int *cast, int shared)
{
    PyObject *checked;
    long how;

    if (!is_conv(conv)) {
        return 0;
    }
    how = PyLong_AsLong(PyTuple_GET_ITEM(conv, 0));
    switch (how) {
    case KEEP:
        *out = Py_NewRef(value);
        return 1;
    case CAST:
        *cast = 1;
        *out = Py_NewRef(value);
        return 1;
    case INT:
        if (!PyLong_CheckExact(value)) {
            return 0;
        }
        if (!int_in_range(value, PyTuple_GET_ITEM(conv, 1),
                          PyTuple_GET_ITEM(conv, 2))) {
            /* As Python: the checked conversion raises if it does not
               fit; the operand stays the Python int either way. */
            checked = call3(scalar_to, value, cd, self->name);
            if (checked == NULL) {
                return -1;
            }
            Py_DECREF(checked);
        }
        *out = Py_NewRef(value);
        return 1;
    case SCALAR:
        if (scalar_fits(value, PyTuple_GET_ITEM(conv, 2))) {
            /* What the checked conversion computes when it cannot fail. */
            *out = shared ? shared_scalar(value, cd) : NULL;
            if (*out == NULL && !PyErr_Occurred()) {
                PyObject *args[2] = {value, cd};
                *out = PyObject_Vectorcall(asarray, args, 2, NULL);
            }
        }
        else {
            *out = call3(scalar_to, value, cd, self->name);
        }
        return *out == NULL ? -1 : 1;
    case WEAK:
        *out = call3(weak_to, value, cd, self->name);
        return *out == NULL ? -1 : 1;
    case CHECK:
        *cast = 1;
        *out = checked_operand(self, value, cd, pos);
        return *out == NULL ? -1 : 1;
    default:
        if (PyErr_Occurred()) {
            PyErr_Clear();
        }
        return 0;
    }
}

/* An ArrayImpl holding value (an ndarray of key's dtype). */
static PyObject *
new_array(PyObject *value, PyObject *key)
{
    PyObject *obj = array_type->tp_alloc(array_type, 0);

    if (obj == NULL) {
        return NULL;
    }
    *(PyObject **)((char *)obj + value_offset) = Py_NewRef(value);
    *(PyObject **)((char *)obj + key_offset) = Py_NewRef(key);
    return obj;
}

/* The Array of a NumPy function's result out: wrapped as it is when it is
 * an ndarray of out_key's dtype, else by the Python finish(). */
static PyObject *
finish_result(PyObject *out, PyObject *out_key)
{
    PyObject *want = PyTuple_GET_ITEM(out_key, 0);
    PyObject *odt;
    int same;

    if (Py_TYPE(out) == (PyTypeObject *)ndarray_type) {
        odt = ndarray_dtype(out);
        if (odt == NULL) {
            return NULL;
        }
        same = odt == want ? 1 : PyObject_RichCompareBool(odt, want, Py_EQ);
        Py_DECREF(odt);
        if (same < 0) {
            return NULL;
        }
        if (same) {
            return new_array(out, out_key);
        }
    }
    {
        PyObject *args[2] = {out, out_key};
        return PyObject_Vectorcall(finish, args, 2, NULL);
    }
}

/* -- NumPy's error state, in a context of its own -------------------------- */

/*
 * Setting NumPy's error-state ContextVar to "every warning off" and
 * resetting it after the call costs two new mappings and a token per call,
 * about as much as a ufunc on a thousand floats. A NumPy ufunc called on
 * exact ndarrays reads no context variable but that one, so it runs instead
 * in a context of its own (a contextvars.Context holding only that variable,
 * at that value), entered and left without allocating anything: the ufunc
 * reads the same error state and buffer size there, so it computes, warns
 * and raises exactly as with the variable set in the caller's context. Any
 * other function (it may read other variables) runs with the variable set
 * and reset in the caller's context, and so does a call that finds the
 * quiet context entered already (by another thread, whose ufunc released
 * the GIL).
 */
static PyTypeObject *quiet_ufunc;   /* numpy.ufunc */
static PyTypeObject *quiet_ndarray; /* numpy.ndarray */

/* A new context holding only var, at value. */
static PyObject *
quiet_context_new(PyObject *var, PyObject *value)
{
    PyObject *ctx = PyContext_New();
    PyObject *token;

    if (ctx == NULL) {
        return NULL;
    }
    if (PyContext_Enter(ctx) < 0) {
        Py_DECREF(ctx);
        return NULL;
    }
    token = PyContextVar_Set(var, value);
    if (PyContext_Exit(ctx) < 0 || token == NULL) {
        Py_XDECREF(token);
        Py_DECREF(ctx);
        return NULL;
    }
    Py_DECREF(token);
    return ctx;
}

/* Remembers numpy.ufunc and numpy.ndarray for the quiet calls. -1: error. */
static int
quiet_types_load(void)
{
    PyObject *numpy, *ufunc, *ndarray;

    if (quiet_ufunc != NULL) {
        return 0;
    }
    numpy = PyImport_ImportModule("numpy");
    if (numpy == NULL) {
        return -1;
    }
    ufunc = PyObject_GetAttrString(numpy, "ufunc");
    ndarray = PyObject_GetAttrString(numpy, "ndarray");
    Py_DECREF(numpy);
    if (ufunc == NULL || ndarray == NULL || !PyType_Check(ufunc) ||
        !PyType_Check(ndarray)) {
        Py_XDECREF(ufunc);
        Py_XDECREF(ndarray);
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError,
                            "numpy.ufunc and numpy.ndarray must be types");
        }
        return -1;
    }
    quiet_ndarray = (PyTypeObject *)ndarray;
    quiet_ufunc = (PyTypeObject *)ufunc;
    return 0;
}

/* fn(*args, **kwargs) run in the quiet context ctx (the keywords' values
 * follow the n positional arguments in args) when fn is a ufunc and its
 * arguments exact ndarrays (keyword values: ndarrays or strings). *called
 * 0: not called (nothing raised), run it another way. */
static PyObject *
call_in_quiet_context(PyObject *ctx, PyObject *fn, PyObject *const *args,
                      Py_ssize_t n, PyObject *kwnames, int *called)
{
    Py_ssize_t total = n + (kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames));
    PyObject *out;
    PyObject *type, *exc, *traceback;
    Py_ssize_t i;

    *called = 0;
    if (ctx == NULL || quiet_ufunc == NULL || Py_TYPE(fn) != quiet_ufunc) {
        return NULL;
    }
    for (i = 0; i < total; i++) {
        PyTypeObject *t = Py_TYPE(args[i]);

        if (t != quiet_ndarray && !(i >= n && t == &PyUnicode_Type)) {
            return NULL;
        }
    }
    if (PyContext_Enter(ctx) < 0) {
        PyErr_Clear(); /* (entered already) */
        return NULL;
    }
    *called = 1;
    out = PyObject_Vectorcall(fn, args, n, kwnames);
    PyErr_Fetch(&type, &exc, &traceback);
    if (PyContext_Exit(ctx) < 0) {
        Py_CLEAR(out);
        Py_XDECREF(type);
        Py_XDECREF(exc);
        Py_XDECREF(traceback);
        return NULL;
    }
    PyErr_Restore(type, exc, traceback);
    return out;
}

static PyObject *quiet_ctx; /* fp_var at fp_ignore (configure_binary) */

/* fn(*args, **kwargs) with NumPy's floating point warnings off when fp; the
 * keyword arguments' values follow the n positional ones in args, as in a
 * vectorcall. */
static PyObject *
call_quietly_kw(PyObject *fn, PyObject *const *args, Py_ssize_t n,
                PyObject *kwnames, int fp)
{
    PyObject *token;
    PyObject *out;
    PyObject *type, *exc, *traceback;
    int reset;
    int called;

    if (!fp) {
        return PyObject_Vectorcall(fn, args, n, kwnames);
    }
    out = call_in_quiet_context(quiet_ctx, fn, args, n, kwnames, &called);
    if (called) {
        return out;
    }
    token = PyContextVar_Set(fp_var, fp_ignore);
    if (token == NULL) {
        return NULL;
    }
    out = PyObject_Vectorcall(fn, args, n, kwnames);
    PyErr_Fetch(&type, &exc, &traceback);
    reset = PyContextVar_Reset(fp_var, token);
    Py_DECREF(token);
    if (out == NULL) {
        PyErr_Restore(type, exc, traceback);
    }
    else if (reset < 0) {
        Py_CLEAR(out);
    }
    return out;
}

/* fn(*args) with NumPy's floating point warnings off when fp. */
static PyObject *
call_quietly(PyObject *fn, PyObject *const *args, Py_ssize_t n, int fp)
{
    return call_quietly_kw(fn, args, n, NULL, fp);
}

/* -- reusing the buffers of temporaries ------------------------------------ */

/*
 * In x * y + 1.5, the Array x * y is a temporary: only the interpreter's
 * evaluation stack references it, and it dies as soon as the addition
 * returns. As NumPy does for its own arrays (temporary elision), a plan then
 * computes its result into the temporary's buffer, fn(..., out=buffer),
 * instead of allocating a new one, and the result Array takes the buffer
 * over. Arrays are immutable, so this is only done where it is proven that
 * nobody can ever see the buffer change:
 *
 * - the operand is exactly an ArrayImpl whose one reference is a strong
 *   one on the evaluation stack of the running Python frame, as Python
 *   3.14's PyUnstable_Object_IsUniqueReferencedTemporary finds it (a named
 *   Array has a second reference: its name). A reference count of 1 alone
 *   proves nothing: the one reference may belong to a C object that passes
 *   the Array on without counting it and looks at it afterwards (the
 *   arguments a functools.partial stores, the dict behind a mapping proxy,
 *   an element of a NumPy object array). Before 3.14 nothing says where
 *   that reference is, so nothing is reused there (REUSES_TEMPORARIES 0,
 *   reuses_temporaries() False): every result gets a new buffer;
 * - its ndarray is referenced once, by the ArrayImpl: no view of it exists
 *   (a view references its base), no other Array holds it, and no weak
 *   reference to it;
 * - the ndarray owns its memory (base None) and is writeable;
 * - the operand needs no conversion and the result has its dtype; the other
 *   operand is a scalar or has its shape, so the result has it too;
 * - fn is a ufunc with one result, which computes straight into the
 *   buffer: an element is read before the result's element is written;
 * - the buffer is at least REUSE_MIN_BYTES (NumPy's threshold): below it a
 *   new allocation is cheaper than these checks.
 *
 * NumPy is asked for casting='safe': if fn's result dtype would not be the
 * buffer's, it refuses before computing anything, and the result goes to a
 * new array as usual.
 *
 * Compiled programs (typelattice.jit) reuse buffers on their own terms, by
 * the program's liveness, in the Python code they generate
 * (_tracing/primitive.py, PrimitiveEquation.source_reusing).
 */

#define REUSES_TEMPORARIES (PY_VERSION_HEX >= 0x030E0000)
#define REUSE_MIN_BYTES (256 * 1024)

static PyObject *str_strides;
static PyObject *str_read_only; /* ReadOnlyMemory's refusal */
static PyObject *str_nbytes;
static PyObject *str_nout;
static PyObject *str_safe;
static PyObject *out_kwnames; /* ("out", "casting") */

/* Whether arg is an Array whose only reference is the caller's evaluation
 * stack, and whose ndarray value only it references (see "reusing the
 * buffers of temporaries"). The cheap checks, made before the operands are
 * converted (which references them). */
static int
temporary(PyObject *arg, PyObject *value)
{
#if REUSES_TEMPORARIES
    return Py_TYPE(arg) == array_type &&
           Py_TYPE(value) == (PyTypeObject *)ndarray_type &&
           Py_REFCNT(value) == 1 &&
           PyUnstable_Object_IsUniqueReferencedTemporary(arg);
#else
    (void)arg;
    (void)value;
    return 0;
#endif
}

/* An attribute that is an int, or -1 (never with an exception). */
static Py_ssize_t
size_attribute(PyObject *obj, PyObject *name)
{
    PyObject *attr = PyObject_GetAttr(obj, name);
    Py_ssize_t size;

    if (attr == NULL) {
        PyErr_Clear();
        return -1;
    }
    size = PyLong_Check(attr) ? PyLong_AsSsize_t(attr) : -1;
    Py_DECREF(attr);
    if (size == -1) {
        PyErr_Clear();
    }
    return size;
}

/* Whether obj may have weak references (someone could still reach it). */
static int
weakly_referenced(PyObject *obj)
{
    Py_ssize_t offset = Py_TYPE(obj)->tp_weaklistoffset;

    if (offset == 0) {
        return 0; /* its type has no weak references */
    }
    /* A negative offset (weak references managed by Python): cannot tell. */
    return offset < 0 || *(PyObject **)((char *)obj + offset) != NULL;
}

/* Whether a converted operand is a scalar or an array of value's shape. */
static int
scalar_or_same_shape(PyObject *operand, PyObject *value)
{
    PyTypeObject *t = Py_TYPE(operand);
    PyObject *shape, *own;
    int same;

    if (t == &PyLong_Type || t == &PyFloat_Type || t == &PyComplex_Type ||
        t == &PyBool_Type || PyType_IsSubtype(t, generic_type)) {
        return 1;
    }
    if (t != (PyTypeObject *)ndarray_type) {
        return 0;
    }
    shape = PyObject_GetAttr(operand, str_shape);
    own = PyObject_GetAttr(value, str_shape);
    same = shape != NULL && own != NULL && PyTuple_CheckExact(shape) &&
           (PyTuple_GET_SIZE(shape) == 0 ||
            PyObject_RichCompareBool(shape, own, Py_EQ) == 1);
    Py_XDECREF(shape);
    Py_XDECREF(own);
    PyErr_Clear();
    return same;
}

/* The buffer of the temporary operand value (see temporary()) when fn's
 * result can go into it, else NULL (never with an exception). conv is the
 * operand's conversion, other the other operand converted (NULL for a
 * unary plan). Borrowed. */
static PyObject *
result_buffer(PyObject *value, PyObject *conv, PyObject *cd,
              PyObject *out_key, PyObject *fn, PyObject *other,
              Py_ssize_t nin)
{
    PyObject *out_dtype = PyTuple_GET_ITEM(out_key, 0);
    PyObject *attr;
    int ok;

    if ((out_dtype != cd &&
         PyObject_RichCompareBool(out_dtype, cd, Py_EQ) != 1) ||
        PyLong_AsLong(PyTuple_GET_ITEM(conv, 0)) != KEEP ||
        size_attribute(value, str_nbytes) < REUSE_MIN_BYTES ||
        size_attribute(fn, str_nin) != nin ||
        size_attribute(fn, str_nout) != 1 ||
        (other != NULL && !scalar_or_same_shape(other, value))) {
        PyErr_Clear();
        return NULL;
    }
    attr = PyObject_GetAttr(value, str_base);
    ok = attr == Py_None && !weakly_referenced(value);
    Py_XDECREF(attr);
    if (ok) {
        PyObject *flags = PyObject_GetAttr(value, str_flags);
        PyObject *owndata = NULL, *writeable = NULL;

        if (flags != NULL) {
            owndata = PyObject_GetAttr(flags, str_owndata);
            writeable = PyObject_GetAttr(flags, str_writeable);
        }
        ok = owndata == Py_True && writeable == Py_True;
        Py_XDECREF(flags);
        Py_XDECREF(owndata);
        Py_XDECREF(writeable);
    }
    PyErr_Clear();
    return ok ? value : NULL;
}

/* fn(*args) (n of them) with NumPy's floating point warnings off when fp,
 * into buffer when it is not NULL (see result_buffer). */
static PyObject *
compute(PyObject *fn, PyObject *const *args, Py_ssize_t n, PyObject *buffer,
        int fp)
{
    PyObject *with_out[4];
    PyObject *out;

    if (buffer != NULL && n <= 2) {
        memcpy(with_out, args, n * sizeof(PyObject *));
        with_out[n] = buffer;
        with_out[n + 1] = str_safe;
        out = call_quietly_kw(fn, with_out, n, out_kwnames, fp);
        /* A TypeError: NumPy refused the buffer's dtype before computing. */
        if (out != NULL || !PyErr_ExceptionMatches(PyExc_TypeError)) {
            return out;
        }
        PyErr_Clear();
    }
    return call_quietly(fn, args, n, fp);
}

/* The result of the plan on the operands x and y, whose values are vx and
 * vy. NULL with an exception: error; NULL without one: ask Python. */
static PyObject *
binary_run(FastElementwise *self, PyObject *plan, PyObject *x, PyObject *vx,
           PyObject *y, PyObject *vy)
{
    PyObject *fn, *convs, *out_key, *cd;
    PyObject *cx = NULL, *cy = NULL;
    PyObject *out = NULL;
    PyObject *result = NULL;
    PyObject *buffer = NULL;
    int temporary_x = temporary(x, vx);
    int temporary_y = temporary(y, vy);
    int cast = 0;
    int shared;
    int fp;
    int status;

    if (!PyTuple_Check(plan) || PyTuple_GET_SIZE(plan) != 5) {
        return NULL;
    }
    fn = PyTuple_GET_ITEM(plan, 0);
    convs = PyTuple_GET_ITEM(plan, 1);
    out_key = PyTuple_GET_ITEM(plan, 2);
    cd = PyTuple_GET_ITEM(plan, 4);
    if (fn == Py_None) {
        /* No plain NumPy function: the formulation composes primitives. */
        return NULL;
    }
    if (!PyTuple_CheckExact(convs) || PyTuple_GET_SIZE(convs) != 2 ||
        !PyTuple_Check(out_key) || PyTuple_GET_SIZE(out_key) != 2) {
        return NULL;
    }
    shared = ufunc_type != NULL && Py_TYPE(fn) == ufunc_type;
    status = binary_convert(self, PyTuple_GET_ITEM(convs, 0), vx, cd, 0, &cx,
                            &cast, shared);
    if (status <= 0) {
        return NULL;
    }
    status = binary_convert(self, PyTuple_GET_ITEM(convs, 1), vy, cd, 1, &cy,
                            &cast, shared);
    if (status <= 0) {
        goto done;
    }
    fp = PyTuple_GET_ITEM(plan, 3) == Py_True;
    if (cast) {
        PyObject *args[4] = {fn, cx, cy, cd};
        out = call_quietly(cast_call, args, 4, fp);
    }
    else {
        PyObject *args[2] = {cx, cy};
        if (temporary_x) {
            buffer = result_buffer(vx, PyTuple_GET_ITEM(convs, 0), cd, out_key,
                                   fn, cy, 2);
        }
        if (buffer == NULL && temporary_y) {
            buffer = result_buffer(vy, PyTuple_GET_ITEM(convs, 1), cd, out_key,
                                   fn, cx, 2);
        }
        out = compute(fn, args, 2, buffer, fp);
    }
    if (out == NULL) {
        /* Python words NumPy's broadcasting errors its own way (not after
           writing into a buffer: Python would see the operand changed). */
        if (buffer == NULL && PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyErr_Clear();
        }
        goto done;
    }
    result = finish_result(out, out_key);
done:
    Py_XDECREF(cx);
    Py_XDECREF(cy);
    Py_XDECREF(out);
    return result;
}

static PyObject *
binary_vectorcall(FastElementwise *self, PyObject *const *args, size_t nargsf,
                  PyObject *kwnames)
{
    PyObject *vx, *kx, *vy, *ky;
    PyObject *memo = NULL;
    PyObject *plan;
    PyObject *result;
    int status;

    if (PyVectorcall_NARGS(nargsf) != 2 ||
        (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0) ||
        array_type == NULL || scope_var == NULL || global_memo == NULL ||
        other_backend_in_force() ||
        !binary_operand(args[self->swap], &vx, &kx) ||
        !binary_operand(args[1 - self->swap], &vy, &ky)) {
        goto python;
    }
    status = binary_memo(&memo);
    if (status < 0) {
        return NULL;
    }
    if (status == 0) {
        goto python;
    }
    plan = memo_plan(self, memo, kx, ky);
    Py_DECREF(memo);
    if (plan == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        goto python;
    }
    result = binary_run(self, plan, args[self->swap], vx,
                        args[1 - self->swap], vy);
    Py_DECREF(plan);
    if (result != NULL || PyErr_Occurred()) {
        return result;
    }
python:
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

/* The result of a unary plan on the operand x, whose value is v, as
 * make_unary's function computes it.
 * NULL with an exception: error; NULL without one: ask Python. */
static PyObject *
unary_run(FastElementwise *self, PyObject *plan, PyObject *x, PyObject *v)
{
    PyObject *fn, *convs, *conv, *out_key, *cd;
    PyObject *cv = NULL;
    PyObject *out = NULL;
    PyObject *result = NULL;
    PyObject *buffer = NULL;
    int is_temporary = temporary(x, v);
    long how;

    if (!PyTuple_Check(plan) || PyTuple_GET_SIZE(plan) != 5) {
        return NULL;
    }
    fn = PyTuple_GET_ITEM(plan, 0);
    convs = PyTuple_GET_ITEM(plan, 1);
    out_key = PyTuple_GET_ITEM(plan, 2);
    cd = PyTuple_GET_ITEM(plan, 4);
    if (fn == Py_None) {
        /* No plain NumPy function: the formulation composes primitives. */
        return NULL;
    }
    if (!PyTuple_CheckExact(convs) || PyTuple_GET_SIZE(convs) != 1 ||
        !PyTuple_Check(out_key) || PyTuple_GET_SIZE(out_key) != 2) {
        return NULL;
    }
    conv = PyTuple_GET_ITEM(convs, 0);
    if (!is_conv(conv)) {
        return NULL;
    }
    how = PyLong_AsLong(PyTuple_GET_ITEM(conv, 0));
    if (how == KEEP) {
        cv = Py_NewRef(v);
    }
    else if (how == CAST || how == CHECK) {
        PyObject *astype;
        PyObject *src = how == CHECK ? checked_operand(self, v, cd, 0)
                                     : Py_NewRef(v);
        if (src == NULL) {
            return NULL;
        }
        astype = PyObject_GetAttr(src, str_astype);
        Py_DECREF(src);
        if (astype == NULL) {
            return NULL;
        }
        cv = call_quietly(astype, &cd, 1, 1);
        Py_DECREF(astype);
    }
    else if (how == WEAK) {
        cv = call3(weak_to, v, cd, self->name);
    }
    else if (how == INT || how == SCALAR) {
        cv = call3(scalar_to, v, cd, self->name);
    }
    else {
        PyErr_Clear();
        return NULL;
    }
    if (cv == NULL) {
        return NULL;
    }
    if (is_temporary) {
        buffer = result_buffer(v, conv, cd, out_key, fn, NULL, 1);
    }
    out = compute(fn, &cv, 1, buffer, PyTuple_GET_ITEM(plan, 3) == Py_True);
    Py_DECREF(cv);
    if (out == NULL) {
        return NULL;
    }
    result = finish_result(out, out_key);
    Py_DECREF(out);
    return result;
}

static PyObject *
unary_vectorcall(FastElementwise *self, PyObject *const *args, size_t nargsf,
                 PyObject *kwnames)
{
    PyObject *v, *k;
    PyObject *memo = NULL;
    PyObject *plan;
    PyObject *result;

    if (PyVectorcall_NARGS(nargsf) != 1 ||
        (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0) ||
        array_type == NULL || scope_var == NULL || global_memo == NULL ||
        other_backend_in_force() || !binary_operand(args[0], &v, &k)) {
        goto python;
    }
    memo = memo_in_force(global_memo, str_memo);
    if (memo == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        goto python;
    }
    plan = memo_plan(self, memo, k, NULL);
    Py_DECREF(memo);
    if (plan == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        goto python;
    }
    result = unary_run(self, plan, args[0], v);
    Py_DECREF(plan);
    if (result != NULL || PyErr_Occurred()) {
        return result;
    }
python:
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

static PyObject *
FastElementwise_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"op", "fallback", "swap", NULL};
    PyObject *op;
    PyObject *fallback;
    PyObject *swap_obj = NULL; /* given for an operator only */
    PyObject *name;
    PyObject *nin_obj;
    long nin;
    int swap = 0;
    FastElementwise *self;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|O:FastElementwise", keywords,
                                     &op, &fallback, &swap_obj)) {
        return NULL;
    }
    if (swap_obj != NULL && (swap = PyObject_IsTrue(swap_obj)) < 0) {
        return NULL;
    }
    if (!PyCallable_Check(fallback)) {
        PyErr_Format(PyExc_TypeError, "fallback must be callable, not %R",
                     fallback);
        return NULL;
    }
    nin_obj = PyObject_GetAttr(op, str_nin);
    if (nin_obj == NULL) {
        return NULL;
    }
    nin = PyLong_Check(nin_obj) ? PyLong_AsLong(nin_obj) : -1;
    Py_DECREF(nin_obj);
    if (nin != 1 && nin != 2) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "op.nin must be 1 or 2");
        }
        return NULL;
    }
    if (nin == 1 && swap) {
        PyErr_SetString(PyExc_ValueError, "swap is for binary functions");
        return NULL;
    }
    name = PyObject_GetAttr(op, str_name);
    if (name == NULL) {
        return NULL;
    }
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "op.name must be a str, not %R", name);
        Py_DECREF(name);
        return NULL;
    }
    self = (FastElementwise *)type->tp_alloc(type, 0);
    if (self == NULL) {
        Py_DECREF(name);
        return NULL;
    }
    self->op = Py_NewRef(op);
    self->fallback = Py_NewRef(fallback);
    self->name = name;
    self->dict = NULL;
    self->swap = swap;
    self->vectorcall = nin == 1 ? (vectorcallfunc)unary_vectorcall
                                : (vectorcallfunc)binary_vectorcall;
    return (PyObject *)self;
}

static int
FastElementwise_traverse(FastElementwise *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fallback);
    Py_VISIT(self->dict);
    Py_VISIT(self->op);
    Py_VISIT(self->name);
    for (int i = 0; i < PLAN_SLOTS; i++) {
        Py_VISIT(self->plans[i].kx);
        Py_VISIT(self->plans[i].ky);
        Py_VISIT(self->plans[i].plan);
    }
    return 0;
}

static int
FastElementwise_clear(FastElementwise *self)
{
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->dict);
    Py_CLEAR(self->op);
    Py_CLEAR(self->name);
    for (int i = 0; i < PLAN_SLOTS; i++) {
        Py_CLEAR(self->plans[i].kx);
        Py_CLEAR(self->plans[i].ky);
        Py_CLEAR(self->plans[i].plan);
        self->plans[i].memo = NULL;
        self->plans[i].stamp = 0;
    }
    return 0;
}

static void
FastElementwise_dealloc(FastElementwise *self)
{
    PyObject_GC_UnTrack(self);
    FastElementwise_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
FastElementwise_repr(FastElementwise *self)
{
    return PyUnicode_FromFormat("<C fast path of %R>", self->fallback);
}

/* As a class attribute (an operator), bound like a function. */
static PyObject *
FastElementwise_get(PyObject *self, PyObject *obj, PyObject *Py_UNUSED(type))
{
    if (obj == NULL || obj == Py_None) {
        return Py_NewRef(self);
    }
    return PyMethod_New(self, obj);
}

static PyObject *
FastElementwise_reduce(FastElementwise *self, PyObject *Py_UNUSED(ignored))
{
    return PyObject_GetAttr((PyObject *)self, str_qualname);
}

static PyObject *
FastElementwise_get_fallback(FastElementwise *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(self->fallback);
}

static PyObject *
FastElementwise_get_op(FastElementwise *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(self->op);
}

static PyObject *
FastElementwise_get_swap(FastElementwise *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(self->swap);
}

static PyMethodDef FastElementwise_methods[] = {
    {"__reduce__", (PyCFunction)FastElementwise_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef FastElementwise_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"fallback", (getter)FastElementwise_get_fallback, NULL,
     "The Python function, called with the same arguments when the fast "
     "path cannot answer.",
     NULL},
    {"op", (getter)FastElementwise_get_op, NULL, "The elementwise Op.", NULL},
    {"swap", (getter)FastElementwise_get_swap, NULL,
     "Whether the arguments are (self, other) of a reflected operator.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject FastElementwise_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "typelattice._speedups.FastElementwise",
    .tp_basicsize = sizeof(FastElementwise),
    .tp_dealloc = (destructor)FastElementwise_dealloc,
    .tp_vectorcall_offset = offsetof(FastElementwise, vectorcall),
    .tp_repr = (reprfunc)FastElementwise_repr,
    .tp_call = PyVectorcall_Call,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
                Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = PyDoc_STR(
        "FastElementwise(op, fallback, swap=False)\n--\n\n"
        "A unary or binary elementwise function (or, with swap, a reflected "
        "operator) that runs cached plans of op on arrays and Python "
        "scalars, and calls fallback, with the same arguments, whenever it "
        "cannot."),
    .tp_traverse = (traverseproc)FastElementwise_traverse,
    .tp_clear = (inquiry)FastElementwise_clear,
    .tp_methods = FastElementwise_methods,
    .tp_getset = FastElementwise_getset,
    .tp_descr_get = FastElementwise_get,
    .tp_dictoffset = offsetof(FastElementwise, dict),
    .tp_new = FastElementwise_new,
};

static int slot_offset(PyObject *type, PyObject *descr, Py_ssize_t *offset);

/* -- primitives bound eagerly ------------------------------------------------- */

/*
 * FastPrimitive(fallback, primitive=None, nargs=-1) binds a primitive of
 * typelattice.lax on arrays, reading the plans the Python code made
 * (_tracing/primitive.py: Primitive.eager, a dict of EagerPlan by
 * eager_key). Without primitive it is Primitive.bind itself (a method: the
 * primitive is the first argument, keywords are the parameters); with one it
 * is a public function of typelattice.lax whose arguments are exactly the
 * primitive's nargs operands (lax.add: to_arrays returns arrays as they are,
 * then the primitive is bound); keywords are then never handled here, and
 * it binds in C only while Primitive.bind is the C one. With scalars (a
 * public function that converts its operands with _lax/_primitive.py's
 * to_arrays), two operands may be an array and a Python int, float or
 * complex: the scalar is converted as to_array converts it, from the
 * conversion it remembered (see scalar_operand), and the two are bound as
 * arrays.
 *
 * It answers only when no jit or eval_shape trace runs in this context
 * (tracer.ACTIVE is empty, or the trace variable holds None: only
 * differentiation traces run, whose tracers are no arrays), the NumPy
 * backend computes in every thread (the plans are its own: no other backend
 * is in force, _backends.IN_USE is empty), every operand is exactly an
 * ArrayImpl and the primitive has a plan for
 * their signature: the key is built as eager_key builds it -- the operands'
 * interned avals, their shapes, then the (name, value) pairs of the
 * parameters in the order given -- and the plan's function is called as
 * Primitive.bind calls it (the operands' values, and the parameters when
 * the plan says so, with NumPy's floating point warnings off). Its result
 * is wrapped as _result_as wraps it: an ndarray of the plan's dtype is
 * taken as it is (even an operand's memory or a view of it), with the
 * plan's out_key; anything else is given to _result_as itself. So every answer is
 * the Python one by construction; a call without a plan (the first of its
 * signature, or one whose checks fail), with another operand, an
 * unhashable parameter or several results is handed to fallback with the
 * arguments as given.
 */

#define BIND_MAX_OPERANDS 8

/* Set by configure_bind(). */
static PyTypeObject *bind_array_type; /* ArrayImpl */
static Py_ssize_t bind_value_offset;
static Py_ssize_t bind_key_offset;
static PyTypeObject *primitive_type; /* Primitive */
static Py_ssize_t eager_offset;      /* its eager slot */
static PyObject *bind_active;        /* tracer.ACTIVE: traces running */
static PyObject *bind_fp_var;        /* NumPy's error-state ContextVar */
static PyObject *bind_fp_ignore;     /* its value with every warning off */
static PyObject *bind_owned;         /* primitive._result_as */
static PyObject *bind_quiet_ctx;     /* bind_fp_var at bind_fp_ignore */
static PyObject *bind_ndarray;       /* numpy.ndarray */
static PyObject *str_bind;
static PyObject *str_lax_scalar;
static PyTypeObject FastPrimitive_Type;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fallback;
    PyObject *dict;
    PyObject *primitive; /* NULL: Primitive.bind */
    Py_ssize_t nargs;    /* the operands of a public function */
    int scalars;         /* it converts Python scalars with to_arrays */
} FastPrimitive;

/* The Array of the plan's result out (see FastPrimitive), as _result_as
 * makes it: an ndarray of out_key's dtype as it is (an operand's memory or
 * a view of it among them: operands are Arrays, whose memory nobody
 * writes to). A result that is not an ndarray (a NumPy scalar of a
 * reduction to 0-d) is first made one by numpy.asarray, as there; anything
 * else goes to _result_as itself. out is borrowed. */
static PyObject *
bind_result(PyObject *out, PyObject *out_key)
{
    PyObject *want = PyTuple_GET_ITEM(out_key, 0);
    PyObject *obj, *odt;
    int ok;

    if (Py_TYPE(out) != (PyTypeObject *)bind_ndarray && asarray != NULL) {
        out = PyObject_Vectorcall(asarray, &out, 1, NULL);
        if (out == NULL) {
            return NULL;
        }
    }
    else {
        Py_INCREF(out);
    }
    ok = Py_TYPE(out) == (PyTypeObject *)bind_ndarray;
    if (ok) {
        odt = ndarray_dtype(out);
        if (odt == NULL) {
            ok = -1;
        }
        else {
            ok = odt == want ? 1 : PyObject_RichCompareBool(odt, want, Py_EQ);
            Py_DECREF(odt);
        }
    }
    if (ok < 0) {
        Py_DECREF(out);
        return NULL;
    }
    if (ok) {
        obj = bind_array_type->tp_alloc(bind_array_type, 0);
        if (obj == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        *(PyObject **)((char *)obj + bind_value_offset) = out; /* (taken) */
        *(PyObject **)((char *)obj + bind_key_offset) = Py_NewRef(out_key);
        return obj;
    }
    {
        PyObject *args[2] = {out, out_key};
        obj = PyObject_Vectorcall(bind_owned, args, 2, NULL);
    }
    Py_DECREF(out);
    return obj;
}

static PyObject *trace_var; /* _tracing.tracer._current (configure_jit) */

/* Whether no jit or eval_shape trace runs in this context (the trace
 * variable holds None), while traces run somewhere (tracer.ACTIVE): only
 * differentiation traces, which never take arrays, or traces of other
 * threads. Primitive.bind then computes on arrays as when none runs (it
 * records a binding only in the trace of its own context). 0 when unsure. */
static int
no_trace_here(void)
{
    PyObject *running;
    int none;

    if (trace_var == NULL) {
        return 0;
    }
    if (PyContextVar_Get(trace_var, NULL, &running) < 0) {
        PyErr_Clear();
        return 0;
    }
    none = running == Py_None;
    Py_XDECREF(running);
    return none;
}

/*
 * The plans last found, per primitive and operand avals: a table of
 * BIND_MEMO_SLOTS entries indexed by a hash of the primitive, the operands'
 * avals and the parameters' names, each holding the key it was found under
 * (as eager_key builds it) and the plan. A call whose operands have the
 * entry's avals (the same interned objects) and shapes, and whose parameters
 * are the entry's names with the same values (the same objects, or equal
 * ints, strings and tuples of them: values that hash alike when equal),
 * builds an equal key: its plan is the one Primitive.eager holds under the
 * entry's key, looked up there again (so a plan dropped from the dict is
 * never used) unless the dict is unchanged since the entry was made (its
 * dict_stamp). The key need not be built
 * then: no tuple of shapes is made, and nothing hashed.
 */
#define BIND_MEMO_SLOTS 256
typedef struct {
    PyObject *prim; /* NULL: an empty slot */
    PyObject *key;
    PyObject *plan;
    PyObject *eager; /* the dict the plan was found in (borrowed: compared) */
    unsigned long long stamp; /* its dict_stamp then */
} BindMemo;
static BindMemo bind_memo[BIND_MEMO_SLOTS];


/* Whether two parameter values are the same for a dict: the same object,
 * or equal exact ints, strings or tuples of such. */
static int
param_same(PyObject *a, PyObject *b)
{
    PyTypeObject *t = Py_TYPE(a);
    Py_ssize_t i;

    if (a == b) {
        return 1;
    }
    if (t != Py_TYPE(b)) {
        return 0;
    }
    if (t == &PyLong_Type) {
        return PyObject_RichCompareBool(a, b, Py_EQ) == 1;
    }
    if (t == &PyUnicode_Type) {
        return PyUnicode_Compare(a, b) == 0;
    }
    if (t == &PyTuple_Type) {
        if (PyTuple_GET_SIZE(a) != PyTuple_GET_SIZE(b)) {
            return 0;
        }
        for (i = 0; i < PyTuple_GET_SIZE(a); i++) {
            if (!param_same(PyTuple_GET_ITEM(a, i), PyTuple_GET_ITEM(b, i))) {
                return 0;
            }
        }
        return 1;
    }
    return 0;
}

/* Whether key is the one eager_key builds for the operands args (values:
 * their ndarrays, then the parameters' values) and kwnames. */
static int
bind_key_matches(PyObject *key, PyObject *const *args, PyObject *const *values,
                 Py_ssize_t n, PyObject *kwnames, Py_ssize_t nkw)
{
    Py_ssize_t i;

    if (PyTuple_GET_SIZE(key) != 2 * n + nkw) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        if (PyTuple_GET_ITEM(key, i) !=
            *(PyObject **)((char *)args[i] + bind_key_offset)) {
            return 0;
        }
    }
    for (i = 0; i < n; i++) {
        int same = ndarray_has_shape(values[i], PyTuple_GET_ITEM(key, n + i));

        if (same != 1) {
            PyErr_Clear();
            return 0;
        }
    }
    for (i = 0; i < nkw; i++) {
        PyObject *item = PyTuple_GET_ITEM(key, 2 * n + i);

        if (PyTuple_GET_ITEM(item, 0) != PyTuple_GET_ITEM(kwnames, i) ||
            !param_same(PyTuple_GET_ITEM(item, 1), values[n + i])) {
            PyErr_Clear();
            return 0;
        }
    }
    return 1;
}

/* The key eager_key builds, a new reference. */
static PyObject *
bind_key(PyObject *const *args, PyObject *const *values, Py_ssize_t n,
         PyObject *kwnames, Py_ssize_t nkw)
{
    PyObject *key = PyTuple_New(2 * n + nkw);
    Py_ssize_t i;

    if (key == NULL) {
        return NULL;
    }
    for (i = 0; i < n; i++) {
        PyObject *shape = ndarray_shape(values[i]);

        if (shape == NULL) {
            Py_DECREF(key);
            return NULL;
        }
        PyTuple_SET_ITEM(
            key, i,
            Py_NewRef(*(PyObject **)((char *)args[i] + bind_key_offset)));
        PyTuple_SET_ITEM(key, n + i, shape);
    }
    for (i = 0; i < nkw; i++) {
        PyObject *item =
            PyTuple_Pack(2, PyTuple_GET_ITEM(kwnames, i), values[n + i]);

        if (item == NULL) {
            Py_DECREF(key);
            return NULL;
        }
        PyTuple_SET_ITEM(key, 2 * n + i, item);
    }
    return key;
}

/* The plan of prim's eager dict for these operands and parameters, a new
 * reference; NULL with an exception: error; NULL without one: none (ask
 * Python). */
static PyObject *
bind_plan(PyObject *prim, PyObject *eager, PyObject *const *args,
          PyObject *const *values, Py_ssize_t n, PyObject *kwnames)
{
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    size_t h = (size_t)prim >> 4;
    BindMemo *e;
    PyObject *key, *plan;
    unsigned long long stamp;
    Py_ssize_t i;

    for (i = 0; i < n; i++) {
        h = h * 1000003u ^
            ((size_t)*(PyObject **)((char *)args[i] + bind_key_offset) >> 4);
    }
    for (i = 0; i < nkw; i++) {
        h = h * 1000003u ^ ((size_t)PyTuple_GET_ITEM(kwnames, i) >> 4);
    }
    e = &bind_memo[(h ^ (h >> 17)) % BIND_MEMO_SLOTS];
    if (e->prim == prim && e->eager == eager &&
        bind_key_matches(e->key, args, values, n, kwnames, nkw)) {
        if (e->stamp != 0 && e->stamp == dict_stamp(eager, 0)) {
            return Py_NewRef(e->plan);
        }
        stamp = dict_stamp(eager, 1); /* (first: any change moves it) */
        plan = PyDict_GetItemWithError(eager, e->key);
        if (plan == NULL) {
            return NULL; /* (dropped: Python makes it again) */
        }
        Py_INCREF(plan);
        Py_SETREF(e->plan, Py_NewRef(plan));
        e->stamp = stamp;
        return plan;
    }
    key = bind_key(args, values, n, kwnames, nkw);
    if (key == NULL) {
        return NULL;
    }
    stamp = dict_stamp(eager, 1);
    plan = PyDict_GetItemWithError(eager, key);
    if (plan == NULL) {
        Py_DECREF(key);
        /* As Python: an unhashable parameter is looked up no further. */
        if (PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
        }
        return NULL;
    }
    Py_INCREF(plan);
    Py_XSETREF(e->prim, Py_NewRef(prim));
    Py_XSETREF(e->key, key);
    Py_XSETREF(e->plan, Py_NewRef(plan));
    e->eager = eager;
    e->stamp = stamp;
    return plan;
}

/* The primitive prim bound eagerly on the n operands args, with the
 * parameters kwnames (their values follow the operands in args).
 * NULL with an exception: error; NULL without one: ask Python. */
static PyObject *
bind_eagerly(PyObject *prim, PyObject *const *args, Py_ssize_t n,
             PyObject *kwnames)
{
    PyObject *values[2 * BIND_MAX_OPERANDS]; /* operands, then parameters */
    PyObject *eager, *plan, *fn, *out_key, *token, *out;
    PyObject *type, *exc, *traceback;
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    Py_ssize_t i;
    int with_params, reset, called;

    if (bind_array_type == NULL || other_backend_in_force() ||
        Py_TYPE(prim) != primitive_type || n > BIND_MAX_OPERANDS ||
        nkw > BIND_MAX_OPERANDS ||
        (PyList_GET_SIZE(bind_active) != 0 && !no_trace_here())) {
        return NULL;
    }
    eager = *(PyObject **)((char *)prim + eager_offset);
    if (eager == NULL || !PyDict_CheckExact(eager)) {
        return NULL;
    }
    for (i = 0; i < n; i++) {
        if (Py_TYPE(args[i]) != bind_array_type) {
            return NULL;
        }
        values[i] = *(PyObject **)((char *)args[i] + bind_value_offset);
        if (values[i] == NULL ||
            *(PyObject **)((char *)args[i] + bind_key_offset) == NULL) {
            return NULL;
        }
    }
    for (i = 0; i < nkw; i++) {
        values[n + i] = args[n + i];
    }
    plan = bind_plan(prim, eager, args, values, n, kwnames);
    if (plan == NULL) {
        return NULL;
    }
    /* EagerPlan(fn, with_params, out_key, out) */
    if (!PyTuple_Check(plan) || PyTuple_GET_SIZE(plan) != 4) {
        Py_DECREF(plan);
        return NULL;
    }
    fn = PyTuple_GET_ITEM(plan, 0);
    with_params = PyTuple_GET_ITEM(plan, 1) == Py_True;
    out_key = PyTuple_GET_ITEM(plan, 2);
    if (!PyTuple_Check(out_key) || PyTuple_GET_SIZE(out_key) != 2) {
        Py_DECREF(plan);
        return NULL; /* several results (None) */
    }
    /* (the reference to plan keeps fn and out_key alive while it runs) */
    if (!with_params) {
        out = call_in_quiet_context(bind_quiet_ctx, fn, values, n, NULL,
                                    &called);
        if (called) {
            goto computed;
        }
    }
    token = PyContextVar_Set(bind_fp_var, bind_fp_ignore);
    if (token == NULL) {
        Py_DECREF(plan);
        return NULL;
    }
    if (with_params) {
        out = PyObject_Vectorcall(fn, values, n, nkw ? kwnames : NULL);
    }
    else {
        out = PyObject_Vectorcall(fn, values, n, NULL);
    }
    PyErr_Fetch(&type, &exc, &traceback);
    reset = PyContextVar_Reset(bind_fp_var, token);
    Py_DECREF(token);
    if (out == NULL) {
        PyErr_Restore(type, exc, traceback);
        Py_DECREF(plan);
        return NULL;
    }
    if (reset < 0) {
        Py_DECREF(out);
        Py_DECREF(plan);
        return NULL;
    }
computed:
    if (out == NULL) {
        Py_DECREF(plan);
        return NULL;
    }
    {
        PyObject *result = bind_result(out, out_key);

        Py_DECREF(out);
        Py_DECREF(plan);
        return result;
    }
}

/* Whether Primitive.bind is still a FastPrimitive: a public function may
 * bind in C only then (code that replaces Primitive.bind, to record the
 * bindings, sees those of the public functions too). */
static int
binds_in_c(void)
{
    PyObject *bind;

    if (primitive_type == NULL) {
        return 0;
    }
    bind = _PyType_Lookup(primitive_type, str_bind); /* (borrowed) */
    return bind != NULL && Py_TYPE(bind) == &FastPrimitive_Type &&
           ((FastPrimitive *)bind)->primitive == NULL;
}

/* Whether the Python int, float or complex v lies in [lo, hi] (each part
 * of a complex), as _lax/_primitive.py's to_array compares.
 * -1: error. */
static int
scalar_in_range(PyObject *v, PyObject *lo, PyObject *hi)
{
    int ok;

    if (PyComplex_CheckExact(v)) {
        double l = PyFloat_AsDouble(lo);
        double h = PyFloat_AsDouble(hi);
        double re = PyComplex_RealAsDouble(v);
        double im = PyComplex_ImagAsDouble(v);

        if (PyErr_Occurred()) {
            return -1;
        }
        return l <= re && re <= h && l <= im && im <= h;
    }
    ok = PyObject_RichCompareBool(lo, v, Py_LE);
    if (ok != 1) {
        return ok;
    }
    return PyObject_RichCompareBool(v, hi, Py_LE);
}

/* The Array that to_array makes of the Python int, float or complex v
 * meeting an array of dtype like, from the conversion it remembered in
 * the memo of the configuration in force, under ("lax.scalar", like,
 * type(v)): (dtype, weak key, lo, hi), numpy.asarray(v, dtype) being the
 * checked conversion's value for v in [lo, hi]. NULL (never with an
 * exception) when Python must convert it: nothing remembered yet, a value
 * outside the range (the checked conversion raises or keeps inf and nan),
 * or anything unexpected. */
static PyObject *
scalar_operand(PyObject *v, PyObject *like)
{
    PyObject *memo, *key, *conv, *value, *obj;
    int fits;

    if (asarray == NULL || bind_ndarray == NULL) {
        return NULL;
    }
    memo = memo_in_force(global_memo, str_memo);
    if (memo == NULL) {
        PyErr_Clear();
        return NULL;
    }
    key = PyTuple_Pack(3, str_lax_scalar, like, (PyObject *)Py_TYPE(v));
    if (key == NULL) {
        Py_DECREF(memo);
        PyErr_Clear();
        return NULL;
    }
    conv = PyDict_GetItemWithError(memo, key);
    Py_XINCREF(conv);
    Py_DECREF(key);
    Py_DECREF(memo);
    if (conv == NULL || !PyTuple_CheckExact(conv) ||
        PyTuple_GET_SIZE(conv) != 4) {
        Py_XDECREF(conv);
        PyErr_Clear();
        return NULL;
    }
    fits = scalar_in_range(v, PyTuple_GET_ITEM(conv, 2),
                           PyTuple_GET_ITEM(conv, 3));
    if (fits != 1) {
        Py_DECREF(conv);
        PyErr_Clear();
        return NULL;
    }
    {
        PyObject *call[2] = {v, PyTuple_GET_ITEM(conv, 0)};

        value = PyObject_Vectorcall(asarray, call, 2, NULL);
    }
    if (value == NULL || Py_TYPE(value) != (PyTypeObject *)bind_ndarray) {
        Py_XDECREF(value);
        Py_DECREF(conv);
        PyErr_Clear();
        return NULL;
    }
    obj = bind_array_type->tp_alloc(bind_array_type, 0);
    if (obj == NULL) {
        Py_DECREF(value);
        Py_DECREF(conv);
        PyErr_Clear();
        return NULL;
    }
    *(PyObject **)((char *)obj + bind_value_offset) = value;
    *(PyObject **)((char *)obj + bind_key_offset) =
        Py_NewRef(PyTuple_GET_ITEM(conv, 1));
    Py_DECREF(conv);
    return obj;
}

/* The primitive prim bound eagerly on two operands, an array and a Python
 * int, float or complex (in either order), as to_arrays then
 * Primitive.bind would bind them. NULL with an exception: error; NULL
 * without one: ask Python. */
static PyObject *
bind_with_scalar(PyObject *prim, PyObject *const *args)
{
    PyObject *operands[2];
    PyObject *scalar, *akey, *result;
    int s;

    if (bind_array_type == NULL) {
        return NULL;
    }
    if (Py_TYPE(args[0]) == bind_array_type) {
        s = 1;
    }
    else if (Py_TYPE(args[1]) == bind_array_type) {
        s = 0;
    }
    else {
        return NULL;
    }
    if (!PyLong_CheckExact(args[s]) && !PyFloat_CheckExact(args[s]) &&
        !PyComplex_CheckExact(args[s])) {
        return NULL;
    }
    akey = *(PyObject **)((char *)args[1 - s] + bind_key_offset);
    if (akey == NULL || !PyTuple_Check(akey) || PyTuple_GET_SIZE(akey) != 2) {
        return NULL;
    }
    scalar = scalar_operand(args[s], PyTuple_GET_ITEM(akey, 0));
    if (scalar == NULL) {
        return NULL;
    }
    operands[s] = scalar;
    operands[1 - s] = args[1 - s];
    result = bind_eagerly(prim, operands, 2, NULL);
    Py_DECREF(scalar);
    return result;
}

static PyObject *
fast_primitive_vectorcall(FastPrimitive *self, PyObject *const *args,
                          size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *result;

    if (self->primitive == NULL) { /* Primitive.bind(prim, *args, **params) */
        if (nargs >= 1) {
            result = bind_eagerly(args[0], args + 1, nargs - 1, kwnames);
            if (result != NULL || PyErr_Occurred()) {
                return result;
            }
        }
    }
    else if (nargs == self->nargs &&
             (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) &&
             binds_in_c()) {
        result = bind_eagerly(self->primitive, args, nargs, NULL);
        if (result != NULL || PyErr_Occurred()) {
            return result;
        }
        if (self->scalars && nargs == 2) {
            result = bind_with_scalar(self->primitive, args);
            if (result != NULL || PyErr_Occurred()) {
                return result;
            }
        }
    }
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

static PyObject *
FastPrimitive_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"fallback", "primitive", "nargs", "scalars",
                               NULL};
    PyObject *fallback;
    PyObject *primitive = Py_None;
    Py_ssize_t nargs = -1;
    int scalars = 0;
    FastPrimitive *self;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|Onp:FastPrimitive",
                                     keywords, &fallback, &primitive,
                                     &nargs, &scalars)) {
        return NULL;
    }
    if (!PyCallable_Check(fallback)) {
        PyErr_Format(PyExc_TypeError, "fallback must be callable, not %R",
                     fallback);
        return NULL;
    }
    if (primitive != Py_None &&
        (nargs < 0 || nargs > BIND_MAX_OPERANDS)) {
        PyErr_Format(PyExc_ValueError,
                     "nargs must be the primitive's number of operands, 0 "
                     "to %d, got %zd",
                     BIND_MAX_OPERANDS, nargs);
        return NULL;
    }
    self = (FastPrimitive *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->fallback = Py_NewRef(fallback);
    self->primitive = primitive == Py_None ? NULL : Py_NewRef(primitive);
    self->nargs = nargs;
    self->scalars = primitive != Py_None && scalars;
    self->dict = NULL;
    self->vectorcall = (vectorcallfunc)fast_primitive_vectorcall;
    return (PyObject *)self;
}

static int
FastPrimitive_traverse(FastPrimitive *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fallback);
    Py_VISIT(self->dict);
    Py_VISIT(self->primitive);
    return 0;
}

static int
FastPrimitive_clear(FastPrimitive *self)
{
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->dict);
    Py_CLEAR(self->primitive);
    return 0;
}

static void
FastPrimitive_dealloc(FastPrimitive *self)
{
    PyObject_GC_UnTrack(self);
    FastPrimitive_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
FastPrimitive_repr(FastPrimitive *self)
{
    return PyUnicode_FromFormat("<C fast path of %R>", self->fallback);
}

static PyObject *
FastPrimitive_reduce(FastPrimitive *self, PyObject *Py_UNUSED(ignored))
{
    return PyObject_GetAttr((PyObject *)self, str_qualname);
}

static PyObject *
FastPrimitive_get_fallback(FastPrimitive *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(self->fallback);
}

static PyObject *
FastPrimitive_get_primitive(FastPrimitive *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(self->primitive == NULL ? Py_None : self->primitive);
}

static PyMethodDef FastPrimitive_methods[] = {
    {"__reduce__", (PyCFunction)FastPrimitive_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef FastPrimitive_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"fallback", (getter)FastPrimitive_get_fallback, NULL,
     "The Python function, called with the same arguments when the fast "
     "path cannot answer.",
     NULL},
    {"primitive", (getter)FastPrimitive_get_primitive, NULL,
     "The primitive a public function binds; None for Primitive.bind.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject FastPrimitive_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "typelattice._speedups.FastPrimitive",
    .tp_basicsize = sizeof(FastPrimitive),
    .tp_dealloc = (destructor)FastPrimitive_dealloc,
    .tp_vectorcall_offset = offsetof(FastPrimitive, vectorcall),
    .tp_repr = (reprfunc)FastPrimitive_repr,
    .tp_call = PyVectorcall_Call,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
                Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = PyDoc_STR(
        "FastPrimitive(fallback, primitive=None, nargs=-1, scalars=False)"
        "\n--\n\n"
        "Primitive.bind (no primitive), or a public function binding "
        "primitive to its nargs operands, run from the primitive's eager "
        "plans on arrays (and, with scalars, on an array and a Python "
        "scalar); calls fallback, with the same arguments, whenever it "
        "cannot."),
    .tp_traverse = (traverseproc)FastPrimitive_traverse,
    .tp_clear = (inquiry)FastPrimitive_clear,
    .tp_methods = FastPrimitive_methods,
    .tp_getset = FastPrimitive_getset,
    .tp_descr_get = FastElementwise_get,
    .tp_dictoffset = offsetof(FastPrimitive, dict),
    .tp_new = FastPrimitive_new,
};

static PyObject *
configure_bind(PyObject *Py_UNUSED(module), PyObject *const *args,
               Py_ssize_t nargs)
{
    Py_ssize_t value_at, key_at, eager_at;

    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError,
                        "configure_bind(array_type, value_slot, key_slot, "
                        "primitive_type, eager_slot, active, backends, "
                        "fp_var, fp_ignore, owned, ndarray) takes 11 "
                        "arguments");
        return NULL;
    }
    if (!PyType_Check(args[0]) || !PyType_Check(args[3]) ||
        !PyType_Check(args[10])) {
        PyErr_SetString(PyExc_TypeError,
                        "array_type, primitive_type and ndarray must be types");
        return NULL;
    }
    if (slot_offset(args[0], args[1], &value_at) < 0 ||
        slot_offset(args[0], args[2], &key_at) < 0 ||
        slot_offset(args[3], args[4], &eager_at) < 0) {
        return NULL;
    }
    if (!PyList_CheckExact(args[5]) || !PyList_CheckExact(args[6])) {
        PyErr_Format(PyExc_TypeError,
                     "active and backends must be lists, not %R and %R",
                     args[5], args[6]);
        return NULL;
    }
    if (!PyContextVar_CheckExact(args[7])) {
        PyErr_Format(PyExc_TypeError, "fp_var must be a ContextVar, not %R",
                     args[7]);
        return NULL;
    }
    if (!PyCallable_Check(args[9])) {
        PyErr_Format(PyExc_TypeError, "%R is not callable", args[9]);
        return NULL;
    }
    bind_value_offset = value_at;
    bind_key_offset = key_at;
    eager_offset = eager_at;
    Py_XSETREF(primitive_type, (PyTypeObject *)Py_NewRef(args[3]));
    Py_XSETREF(bind_active, Py_NewRef(args[5]));
    Py_XSETREF(bind_backends, Py_NewRef(args[6]));
    Py_XSETREF(bind_fp_var, Py_NewRef(args[7]));
    Py_XSETREF(bind_fp_ignore, Py_NewRef(args[8]));
    Py_XSETREF(bind_owned, Py_NewRef(args[9]));
    Py_XSETREF(bind_ndarray, Py_NewRef(args[10]));
    if (check_ndarray_layout(args[10]) < 0 || quiet_types_load() < 0) {
        return NULL;
    }
    Py_XSETREF(bind_quiet_ctx, quiet_context_new(args[7], args[8]));
    if (bind_quiet_ctx == NULL) {
        return NULL;
    }
    /* Last: FastPrimitive is idle until bind_array_type is set. */
    Py_XSETREF(bind_array_type, (PyTypeObject *)Py_NewRef(args[0]));
    Py_RETURN_NONE;
}

/* -- jit calls ------------------------------------------------------------------ */

/*
 * JitCall(fallback) is typelattice.jit's Jitted.__call__ for its commonest
 * call, already traced: no trace running, positional arguments only, each
 * exactly an ArrayImpl or a Python bool, int, float or complex. It builds
 * the flat key the Python method stores the entry under in Jitted._fast --
 * (configuration state, then per argument its aval and shape, or its Python
 * type and ()) -- counts a hit, moves the entry to the end of
 * Jitted._order (the cache's least-recently-used order), runs entry.run on
 * the arguments' values and wraps a single result (entry.single) or lets
 * entry.results build the results. A Python scalar's value is the 0-d
 * array of its dtype (int32/int64, float32/float64, complex64/complex128 as
 * enable_x64 says, or bool), made here when it surely fits; anything else
 * (no entry yet, keywords, other arguments, a scalar out of range, inf or
 * nan in 32-bit mode, static arguments: their calls are never stored under
 * a flat key) is handed to fallback, the Python method, with the arguments
 * as given.
 */

static PyObject *jit_dtypes;   /* (int32, int64, float32, float64,
                                  complex64, complex128, bool) */
static PyObject *jit_asarray;  /* numpy.asarray */
/*
 * The 0-d arrays of scalar values passed again and again (scale factors,
 * learning rates...), per dtype of jit_dtypes: a table of JIT_VALUE_SLOTS
 * entries indexed by a hash of the value's bits (an integer's, a double's:
 * so -0.0 and 0.0, or two nans, are told apart by their bits). A value is
 * kept when it is seen a second time in its slot (then its array is made
 * read-only: it is shared by the calls, and by results that return the
 * argument itself); values seen once cost no more than a plain conversion.
 */
#define JIT_VALUE_SLOTS 64
typedef struct {
    unsigned long long bits; /* the value (an integer, or a double's bits) */
    PyObject *array;         /* its read-only 0-d array, once seen twice */
    int used;                /* bits holds a value */
} JitValue;
static JitValue jit_values[7][JIT_VALUE_SLOTS];
static PyObject *str_fast;
static PyObject *str_order;
static PyObject *str_hits;
static PyObject *str_run;
static PyObject *str_single;
static PyObject *str_results;
static PyObject *str_enable_x64;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fallback;
    PyObject *dict;
} JitCall;

/* asarray(args[0], args[1]), the value args[0] having these bits, from
 * its entry in table or made (and kept, read-only, when seen twice). */
static PyObject *
jit_cached_value(JitValue *table, unsigned long long bits,
                 PyObject *const *args)
{
    JitValue *e = &table[(bits * 0x9E3779B97F4A7C15ull) >> 58];
    PyObject *value, *flags, *old;
    int again = e->used && e->bits == bits;
    int rc;

    if (again && e->array != NULL) {
        return Py_NewRef(e->array);
    }
    value = PyObject_Vectorcall(jit_asarray, args, 2, NULL);
    if (value == NULL) {
        return NULL;
    }
    if (!again) { /* the first time here: remembered, not kept */
        old = e->array;
        e->bits = bits;
        e->used = 1;
        e->array = NULL;
        Py_XDECREF(old);
        return value;
    }
    flags = PyObject_GetAttr(value, str_flags);
    if (flags == NULL) {
        Py_DECREF(value);
        return NULL;
    }
    rc = PyObject_SetAttr(flags, str_writeable, Py_False);
    Py_DECREF(flags);
    if (rc < 0) {
        Py_DECREF(value);
        return NULL;
    }
    if (e->used && e->bits == bits && e->array == NULL) { /* (still ours) */
        e->array = Py_NewRef(value);
    }
    return value;
}

/* The 0-d array a Python scalar argument stands for (as
 * _tracing.jit._scalar_input makes it); NULL without an exception when it may not fit: ask Python. */
static PyObject *
jit_scalar(PyObject *x, int x64)
{
    PyTypeObject *t = Py_TYPE(x);
    PyObject *args[2];
    unsigned long long bits;
    Py_complex c;

    args[0] = x;
    if (t == &PyBool_Type) {
        args[1] = PyTuple_GET_ITEM(jit_dtypes, 6);
        return jit_cached_value(jit_values[6], x == Py_True, args);
    }
    if (t == &PyLong_Type) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(x, &overflow);

        if (v == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (overflow != 0 || (!x64 && (v < INT32_MIN || v > INT32_MAX))) {
            return NULL;
        }
        args[1] = PyTuple_GET_ITEM(jit_dtypes, x64);
        return jit_cached_value(jit_values[x64], (unsigned long long)v, args);
    }
    if (t == &PyFloat_Type) {
        double d = PyFloat_AS_DOUBLE(x);

        /* Any double is a float64; finite values up to FLT_MAX in magnitude
         * are finite float32s (inf and nan fail the test: Python decides). */
        if (!x64 && !(fabs(d) <= FLT_MAX)) {
            return NULL;
        }
        memcpy(&bits, &d, sizeof bits);
        args[1] = PyTuple_GET_ITEM(jit_dtypes, 2 + x64);
        return jit_cached_value(jit_values[2 + x64], bits, args);
    }
    if (t != &PyComplex_Type) {
        return NULL;
    }
    c = PyComplex_AsCComplex(x); /* (not kept: rarely a constant) */
    if (!x64 && !(fabs(c.real) <= FLT_MAX && fabs(c.imag) <= FLT_MAX)) {
        return NULL;
    }
    args[1] = PyTuple_GET_ITEM(jit_dtypes, 4 + x64);
    return PyObject_Vectorcall(jit_asarray, args, 2, NULL);
}

/* state.enable_x64 (1 or 0; -1: error), remembered for the last state
 * asked about (states are interned: one object per combination of flags). */
static int
jit_x64(PyObject *state)
{
    static PyObject *last_state; /* a strong reference: never a reused address */
    static int last_x64;
    PyObject *flag;
    int x64;

    if (state == last_state) {
        return last_x64;
    }
    flag = PyObject_GetAttr(state, str_enable_x64);
    if (flag == NULL) {
        return -1;
    }
    x64 = PyObject_IsTrue(flag);
    Py_DECREF(flag);
    if (x64 >= 0) {
        Py_XSETREF(last_state, Py_NewRef(state));
        last_x64 = x64;
    }
    return x64;
}

/* jitted._hits += 1, and the entry made the most recently used: moved to the
 * end of jitted._order (unless another thread evicted it meanwhile). */
static int
jit_count_hit(PyObject *jitted, PyObject *entry)
{
    PyObject *hits, *more, *order;
    Py_ssize_t count;
    int rc;

    hits = PyObject_GetAttr(jitted, str_hits);
    if (hits == NULL) {
        return -1;
    }
    count = PyLong_AsSsize_t(hits);
    Py_DECREF(hits);
    if (count == -1 && PyErr_Occurred()) {
        return -1;
    }
    more = PyLong_FromSsize_t(count + 1);
    if (more == NULL) {
        return -1;
    }
    rc = PyObject_SetAttr(jitted, str_hits, more);
    Py_DECREF(more);
    if (rc < 0) {
        return -1;
    }
    order = PyObject_GetAttr(jitted, str_order);
    if (order == NULL) {
        return -1;
    }
    if (!PyDict_CheckExact(order)) {
        Py_DECREF(order);
        PyErr_SetString(PyExc_TypeError, "Jitted._order must be a dict");
        return -1;
    }
    if (PyDict_DelItem(order, entry) < 0) {
        rc = PyErr_ExceptionMatches(PyExc_KeyError) ? 0 : -1;
        if (rc == 0) {
            PyErr_Clear();
        }
    }
    else {
        rc = PyDict_SetItem(order, entry, Py_None);
    }
    Py_DECREF(order);
    return rc;
}

/* The result of a cached call; NULL without an exception: ask Python. */
static PyObject *
jit_run(PyObject *jitted, PyObject *const *args, Py_ssize_t n)
{
    PyObject *state;
    PyObject *fast = NULL;
    PyObject *key = NULL;
    PyObject *entry = NULL;
    PyObject *values[64];
    PyObject *result = NULL;
    PyObject *run, *outs, *single;
    Py_ssize_t i;
    Py_ssize_t made = 0; /* values[0:made] are new references */
    int is_global;
    int x64 = -1; /* read from the state at the first scalar */

    if (n > 64 || array_type == NULL || jit_dtypes == NULL) {
        return NULL;
    }
    for (i = 0; i < n; i++) {
        PyTypeObject *t = Py_TYPE(args[i]);

        if (t != array_type && t != &PyLong_Type && t != &PyFloat_Type &&
            t != &PyBool_Type && t != &PyComplex_Type) {
            return NULL;
        }
    }
    state = state_in_force(&is_global);
    if (state == NULL) {
        return NULL;
    }
    key = PyTuple_New(1 + 2 * n);
    if (key == NULL) {
        Py_DECREF(state);
        return NULL;
    }
    PyTuple_SET_ITEM(key, 0, state);
    for (i = 0; i < n; i++) {
        PyObject *a = args[i];
        PyObject *aval, *shape, *value;

        if (Py_TYPE(a) == array_type) {
            value = *(PyObject **)((char *)a + value_offset);
            aval = *(PyObject **)((char *)a + key_offset);
            if (value == NULL || aval == NULL) {
                goto done;
            }
            shape = PyObject_GetAttr(value, str_shape);
            if (shape == NULL) {
                goto done;
            }
            Py_INCREF(value);
            Py_INCREF(aval);
        }
        else {
            if (x64 < 0 && (x64 = jit_x64(state)) < 0) {
                goto done;
            }
            value = jit_scalar(a, x64);
            if (value == NULL) {
                goto done;
            }
            aval = Py_NewRef((PyObject *)Py_TYPE(a));
            shape = PyTuple_New(0);
            if (shape == NULL) {
                Py_DECREF(value);
                Py_DECREF(aval);
                goto done;
            }
        }
        values[made++] = value;
        PyTuple_SET_ITEM(key, 1 + 2 * i, aval);
        PyTuple_SET_ITEM(key, 2 + 2 * i, shape);
    }
    fast = PyObject_GetAttr(jitted, str_fast);
    if (fast == NULL || !PyDict_CheckExact(fast)) {
        goto done;
    }
    entry = PyDict_GetItemWithError(fast, key);
    if (entry == NULL) {
        goto done;
    }
    Py_INCREF(entry);
    if (jit_count_hit(jitted, entry) < 0) {
        goto done;
    }
    run = PyObject_GetAttr(entry, str_run);
    if (run == NULL) {
        goto done;
    }
    outs = PyObject_Vectorcall(run, values, n, NULL);
    Py_DECREF(run);
    if (outs == NULL) {
        goto done;
    }
    single = PyObject_GetAttr(entry, str_single);
    if (single == NULL) {
        Py_DECREF(outs);
        goto done;
    }
    if (single != Py_None && PyTuple_CheckExact(outs) &&
        PyTuple_GET_SIZE(outs) >= 1 &&
        Py_TYPE(PyTuple_GET_ITEM(outs, 0)) == (PyTypeObject *)ndarray_type) {
        result = new_array(PyTuple_GET_ITEM(outs, 0), single);
    }
    else {
        result = PyObject_CallMethodOneArg(entry, str_results, outs);
    }
    Py_DECREF(single);
    Py_DECREF(outs);
done:
    for (i = 0; i < made; i++) {
        Py_DECREF(values[i]);
    }
    Py_XDECREF(entry);
    Py_XDECREF(fast);
    Py_DECREF(key);
    return result;
}

static PyObject *
jit_vectorcall(JitCall *self, PyObject *const *args, size_t nargsf,
               PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *running = NULL;
    PyObject *result;

    if (nargs < 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0) ||
        trace_var == NULL || scope_var == NULL || other_backend_in_force()) {
        goto python; /* (flat keys hold the NumPy backend's programs) */
    }
    if (PyContextVar_Get(trace_var, NULL, &running) < 0) {
        return NULL;
    }
    if (running != Py_None) { /* a trace runs here (or no default) */
        Py_XDECREF(running);
        goto python;
    }
    Py_DECREF(running);
    result = jit_run(args[0], args + 1, nargs - 1);
    if (result != NULL || PyErr_Occurred()) {
        return result;
    }
python:
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

static PyObject *
JitCall_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"fallback", NULL};
    PyObject *fallback;
    JitCall *self;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:JitCall", keywords,
                                     &fallback)) {
        return NULL;
    }
    if (!PyCallable_Check(fallback)) {
        PyErr_Format(PyExc_TypeError, "fallback must be callable, not %R",
                     fallback);
        return NULL;
    }
    self = (JitCall *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->fallback = Py_NewRef(fallback);
    self->dict = NULL;
    self->vectorcall = (vectorcallfunc)jit_vectorcall;
    return (PyObject *)self;
}

static int
JitCall_traverse(JitCall *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fallback);
    Py_VISIT(self->dict);
    return 0;
}

static int
JitCall_clear(JitCall *self)
{
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->dict);
    return 0;
}

static void
JitCall_dealloc(JitCall *self)
{
    PyObject_GC_UnTrack(self);
    JitCall_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
JitCall_repr(JitCall *self)
{
    return PyUnicode_FromFormat("<C fast path of %R>", self->fallback);
}

static PyObject *
JitCall_get_fallback(JitCall *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(self->fallback);
}

static PyGetSetDef JitCall_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"fallback", (getter)JitCall_get_fallback, NULL,
     "The Python method, called with the same arguments when the fast path "
     "cannot answer.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject JitCall_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "typelattice._speedups.JitCall",
    .tp_basicsize = sizeof(JitCall),
    .tp_dealloc = (destructor)JitCall_dealloc,
    .tp_vectorcall_offset = offsetof(JitCall, vectorcall),
    .tp_repr = (reprfunc)JitCall_repr,
    .tp_call = PyVectorcall_Call,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
                Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = PyDoc_STR(
        "JitCall(fallback)\n--\n\n"
        "Jitted.__call__ for traced calls with arrays and Python scalars "
        "as positional arguments; calls fallback, with the same arguments, "
        "otherwise."),
    .tp_traverse = (traverseproc)JitCall_traverse,
    .tp_clear = (inquiry)JitCall_clear,
    .tp_getset = JitCall_getset,
    .tp_descr_get = FastElementwise_get,
    .tp_dictoffset = offsetof(JitCall, dict),
    .tp_new = JitCall_new,
};

static PyObject *
configure_jit(PyObject *Py_UNUSED(module), PyObject *const *args,
              Py_ssize_t nargs)
{
    if (nargs != 3 || !PyContextVar_CheckExact(args[0]) ||
        !PyTuple_CheckExact(args[1]) || PyTuple_GET_SIZE(args[1]) != 7 ||
        !PyCallable_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "configure_jit(trace_var, scalar_dtypes, asarray) "
                        "takes a ContextVar, a tuple of 7 dtypes and a "
                        "callable");
        return NULL;
    }
    for (int i = 0; i < 7; i++) { /* (the dtypes may be others now) */
        for (int j = 0; j < JIT_VALUE_SLOTS; j++) {
            jit_values[i][j].used = 0;
            Py_CLEAR(jit_values[i][j].array);
        }
    }
    Py_XSETREF(trace_var, Py_NewRef(args[0]));
    Py_XSETREF(jit_dtypes, Py_NewRef(args[1]));
    Py_XSETREF(jit_asarray, Py_NewRef(args[2]));
    Py_RETURN_NONE;
}

/* -- read-only memory for NumPy ------------------------------------------------
 *
 * NumPy lets anyone holding an ndarray that owns its memory turn its
 * WRITEABLE flag back on, and an Array's ndarray usually owns its memory.
 * So NumPy never gets that ndarray, nor a view of it (whose .base would be
 * it): read_only_view(value) gives an ndarray of value's shape, dtype and
 * strides over the same bytes whose base is a ReadOnlyMemory. Before NumPy
 * sets WRITEABLE on an array, it asks the array's last base for a writable
 * buffer; a ReadOnlyMemory refuses. It has no attributes and no methods,
 * and it is not tracked by the garbage collector (it references only an
 * ndarray made before it, which cannot reference it back), so nothing
 * public reaches the ndarray through it. Buffers it hands out (memoryview,
 * np.frombuffer) are read-only and name it, not the ndarray, as their obj.
 */

typedef struct {
    PyObject_HEAD
    Py_buffer owner;  /* of the ndarray: holds the reference to it */
    char *start;      /* the lowest byte the ndarray's elements cover */
    Py_ssize_t len;   /* the bytes from start its elements cover */
} ReadOnlyMemory;

static int
ReadOnlyMemory_getbuffer(ReadOnlyMemory *self, Py_buffer *view, int flags)
{
    if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE) {
        /* NumPy asks first on every export: a message made once. */
        PyErr_SetObject(PyExc_BufferError, str_read_only);
        view->obj = NULL;
        return -1;
    }
    return PyBuffer_FillInfo(view, (PyObject *)self, self->start, self->len,
                             1, flags);
}

static void
ReadOnlyMemory_dealloc(ReadOnlyMemory *self)
{
    if (self->owner.obj != NULL) {
        PyBuffer_Release(&self->owner);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyBufferProcs ReadOnlyMemory_as_buffer = {
    .bf_getbuffer = (getbufferproc)ReadOnlyMemory_getbuffer,
};

static PyTypeObject ReadOnlyMemory_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "typelattice._speedups.ReadOnlyMemory",
    .tp_basicsize = sizeof(ReadOnlyMemory),
    .tp_dealloc = (destructor)ReadOnlyMemory_dealloc,
    .tp_as_buffer = &ReadOnlyMemory_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .tp_doc = PyDoc_STR("The read-only memory of an Array, as NumPy sees it "
                        "(the base of the arrays numpy.asarray(x) gives)."),
};

/* A tuple of n Py_ssize_t values (new reference). */
static PyObject *
ssize_tuple(const Py_ssize_t *values, int n)
{
    PyObject *tuple = PyTuple_New(n);

    if (tuple == NULL) {
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        PyObject *item = PyLong_FromSsize_t(values[i]);

        if (item == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, i, item);
    }
    return tuple;
}

static PyObject *
read_only_view(PyObject *Py_UNUSED(module), PyObject *value)
{
    ReadOnlyMemory *memory;
    Py_buffer *owner;
    Py_ssize_t low = 0, high = 0, offset = 0;
    int empty = 0;
    PyObject *args[5] = {NULL, NULL, NULL, NULL, NULL};
    PyObject *out = NULL;

    if (ndarray_type == NULL || Py_TYPE(value) != (PyTypeObject *)ndarray_type) {
        PyErr_Format(PyExc_TypeError, "read_only_view takes a numpy.ndarray, "
                                      "not %R", value);
        return NULL;
    }
    memory = PyObject_New(ReadOnlyMemory, &ReadOnlyMemory_Type);
    if (memory == NULL) {
        return NULL;
    }
    owner = &memory->owner;
    owner->obj = NULL;
    /* Shape and strides, never a format: NumPy has none for ml_dtypes'. */
    if (PyObject_GetBuffer(value, owner, PyBUF_STRIDES) < 0) {
        owner->obj = NULL;
        goto done;
    }
    for (int i = 0; i < owner->ndim; i++) {
        Py_ssize_t span = (owner->shape[i] - 1) * owner->strides[i];

        if (owner->shape[i] == 0) {
            empty = 1;
        }
        else if (span < 0) {
            low += span;
        }
        else {
            high += span;
        }
    }
    if (empty) {
        memory->start = owner->buf;
        memory->len = 0;
    }
    else {
        memory->start = (char *)owner->buf + low;
        memory->len = high - low + owner->itemsize;
        offset = -low;
    }
    /* numpy.ndarray(shape, dtype, buffer, offset, strides) */
    args[0] = ssize_tuple(owner->shape, owner->ndim);
    args[1] = PyObject_GetAttr(value, str_dtype);
    args[2] = Py_NewRef((PyObject *)memory);
    args[3] = PyLong_FromSsize_t(offset);
    /* NumPy's buffer gives a zero-size array strides of 0. */
    args[4] = empty ? PyObject_GetAttr(value, str_strides)
                    : ssize_tuple(owner->strides, owner->ndim);
    if (args[0] != NULL && args[1] != NULL && args[3] != NULL &&
        args[4] != NULL) {
        out = PyObject_Vectorcall(ndarray_type, args, 5, NULL);
    }
    for (int i = 0; i < 5; i++) {
        Py_XDECREF(args[i]);
    }
done:
    Py_DECREF(memory);
    return out;
}

/* -- module functions ---------------------------------------------------------- */

static PyObject *
reuses_temporaries(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored))
{
    return PyBool_FromLong(REUSES_TEMPORARIES);
}

static PyObject *
configure(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t i;

    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "configure(scope, ndarray, generic, "
                                         "dtype) takes 4 arguments");
        return NULL;
    }
    if (!PyContextVar_CheckExact(args[0])) {
        PyErr_Format(PyExc_TypeError, "scope must be a ContextVar, not %R",
                     args[0]);
        return NULL;
    }
    for (i = 1; i < 4; i++) {
        if (!PyType_Check(args[i])) {
            PyErr_Format(PyExc_TypeError, "%R is not a type", args[i]);
            return NULL;
        }
    }
    Py_XSETREF(ndarray_type, Py_NewRef(args[1]));
    Py_XSETREF(generic_type, (PyTypeObject *)Py_NewRef(args[2]));
    Py_XSETREF(dtype_type, (PyTypeObject *)Py_NewRef(args[3]));
    /* Last: the lookups are idle until scope_var is set. */
    Py_XSETREF(scope_var, Py_NewRef(args[0]));
    Py_RETURN_NONE;
}

static PyObject *
set_global_memos(PyObject *Py_UNUSED(module), PyObject *const *args,
                 Py_ssize_t nargs)
{
    int allow;

    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "set_global_memos(memo, promotion_memo, rank_allow, "
                        "state) takes 4 arguments");
        return NULL;
    }
    if (!PyDict_Check(args[0]) || !PyDict_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "the memos must be dicts");
        return NULL;
    }
    allow = PyObject_IsTrue(args[2]);
    if (allow < 0) {
        return NULL;
    }
    Py_XSETREF(global_memo, Py_NewRef(args[0]));
    Py_XSETREF(global_promotion_memo, Py_NewRef(args[1]));
    global_rank_allow = allow;
    Py_XSETREF(global_state, Py_NewRef(args[3]));
    Py_RETURN_NONE;
}

/* The offset of a __slots__ slot of type, from its member descriptor. */
static int
slot_offset(PyObject *type, PyObject *descr, Py_ssize_t *offset)
{
    PyMemberDef *member;

    if (!PyObject_TypeCheck(descr, &PyMemberDescr_Type) ||
        PyDescr_TYPE(descr) != (PyTypeObject *)type) {
        PyErr_Format(PyExc_TypeError, "%R is not a slot of %R", descr, type);
        return -1;
    }
    member = ((PyMemberDescrObject *)descr)->d_member;
    if (member->type != T_OBJECT_EX || (member->flags & READONLY)) {
        PyErr_Format(PyExc_TypeError, "%R is not a writable object slot",
                     descr);
        return -1;
    }
    *offset = member->offset;
    return 0;
}

static PyObject *
configure_binary(PyObject *Py_UNUSED(module), PyObject *const *args,
                 Py_ssize_t nargs)
{
    Py_ssize_t value_at, key_at;
    Py_ssize_t i;

    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError,
                        "configure_binary(array_type, value_slot, key_slot, "
                        "fp_var, fp_ignore, scalar_to, weak_to, cast_call, "
                        "finish, asarray, check_operand) takes 11 arguments");
        return NULL;
    }
    if (!PyType_Check(args[0])) {
        PyErr_Format(PyExc_TypeError, "array_type must be a type, not %R",
                     args[0]);
        return NULL;
    }
    if (slot_offset(args[0], args[1], &value_at) < 0 ||
        slot_offset(args[0], args[2], &key_at) < 0) {
        return NULL;
    }
    if (!PyContextVar_CheckExact(args[3])) {
        PyErr_Format(PyExc_TypeError, "fp_var must be a ContextVar, not %R",
                     args[3]);
        return NULL;
    }
    for (i = 5; i < 11; i++) {
        if (!PyCallable_Check(args[i])) {
            PyErr_Format(PyExc_TypeError, "%R is not callable", args[i]);
            return NULL;
        }
    }
    value_offset = value_at;
    key_offset = key_at;
    Py_XSETREF(fp_var, Py_NewRef(args[3]));
    Py_XSETREF(fp_ignore, Py_NewRef(args[4]));
    Py_XSETREF(scalar_to, Py_NewRef(args[5]));
    Py_XSETREF(weak_to, Py_NewRef(args[6]));
    Py_XSETREF(cast_call, Py_NewRef(args[7]));
    Py_XSETREF(finish, Py_NewRef(args[8]));
    Py_XSETREF(asarray, Py_NewRef(args[9]));
    {
        PyObject *numpy = PyImport_ImportModule("numpy");
        PyObject *ufunc = numpy == NULL ? NULL
                                        : PyObject_GetAttrString(numpy, "ufunc");

        Py_XDECREF(numpy);
        if (ufunc == NULL) {
            return NULL;
        }
        if (!PyType_Check(ufunc)) {
            Py_DECREF(ufunc);
            PyErr_SetString(PyExc_TypeError, "numpy.ufunc must be a type");
            return NULL;
        }
        Py_XSETREF(ufunc_type, (PyTypeObject *)ufunc);
    }
    Py_XSETREF(check_operand, Py_NewRef(args[10]));
    if (quiet_types_load() < 0) {
        return NULL;
    }
    Py_XSETREF(quiet_ctx, quiet_context_new(fp_var, fp_ignore));
    if (quiet_ctx == NULL) {
        return NULL;
    }
    /* Last: binary_vectorcall is idle until array_type is set. */
    Py_XSETREF(array_type, (PyTypeObject *)Py_NewRef(args[0]));
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"read_only_view", read_only_view, METH_O,
     PyDoc_STR("read_only_view(value)\n--\n\n"
               "An ndarray of value's shape, dtype and strides over its "
               "memory, read-only for good: its base is a ReadOnlyMemory, "
               "which refuses writable buffers and does not give value "
               "out.")},
    {"reuses_temporaries", reuses_temporaries, METH_NOARGS,
     PyDoc_STR("reuses_temporaries()\n--\n\n"
               "Whether elementwise functions compute into the buffers of "
               "temporary arrays here: whether this Python lets the "
               "extension prove that nothing else can see a temporary "
               "(CPython 3.14 and later).")},
    {"configure", (PyCFunction)(void (*)(void))configure, METH_FASTCALL,
     PyDoc_STR("configure(scope, ndarray, generic, dtype)\n--\n\n"
               "Set the ContextVar holding the scoped configuration and "
               "NumPy's array, scalar and dtype types.")},
    {"set_global_memos", (PyCFunction)(void (*)(void))set_global_memos,
     METH_FASTCALL,
     PyDoc_STR("set_global_memos(memo, promotion_memo, rank_allow, state)"
               "\n--\n\n"
               "Set the memos of the global configuration state, whether "
               "its rank_promotion is 'allow', and the state itself.")},
    {"configure_jit", (PyCFunction)(void (*)(void))configure_jit,
     METH_FASTCALL,
     PyDoc_STR("configure_jit(trace_var, scalar_dtypes, asarray)\n--\n\n"
               "Set the ContextVar holding the trace running here, the "
               "dtypes of Python scalar arguments (int32, int64, float32, "
               "float64, complex64, complex128, bool) and numpy.asarray.")},
    {"configure_bind", (PyCFunction)(void (*)(void))configure_bind,
     METH_FASTCALL,
     PyDoc_STR("configure_bind(array_type, value_slot, key_slot, "
               "primitive_type, eager_slot, active, backends, fp_var, "
               "fp_ignore, owned, ndarray)\n--\n\n"
               "Set what FastPrimitive works with: the array type and its "
               "slots, the primitive type and its slot of eager plans, the "
               "list of traces running, the list of backends other than "
               "NumPy's in force, NumPy's error-state ContextVar and "
               "its 'ignore' value, the Python wrapping of results and "
               "numpy.ndarray.")},
    {"configure_binary", (PyCFunction)(void (*)(void))configure_binary,
     METH_FASTCALL,
     PyDoc_STR("configure_binary(array_type, value_slot, key_slot, fp_var, "
               "fp_ignore, scalar_to, weak_to, cast_call, finish, asarray, "
               "check_operand)"
               "\n--\n\n"
               "Set what FastElementwise works with: the array type and its "
               "slots, NumPy's error-state ContextVar and its 'ignore' value, "
               "and the Python helpers it calls.")},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "typelattice._speedups",
    .m_doc = PyDoc_STR("C fast paths for typelattice's cached promotion "
                       "lookups (see typelattice._promotion)."),
    .m_size = -1,
    .m_methods = module_methods,
};

static int
intern(PyObject **slot, const char *text)
{
    *slot = PyUnicode_InternFromString(text);
    return *slot == NULL ? -1 : 0;
}

/* CONVERSIONS: {name: code} of enum conversion, for _elementwise to check. */
static int
add_conversions(PyObject *module)
{
    PyObject *table = PyDict_New();
    size_t i;
    int status;

    if (table == NULL) {
        return -1;
    }
    for (i = 0; i < sizeof(conversions) / sizeof(conversions[0]); i++) {
        PyObject *code = PyLong_FromLong(conversions[i].code);
        int failed = code == NULL || PyDict_SetItemString(
                                         table, conversions[i].name, code) < 0;
        Py_XDECREF(code);
        if (failed) {
            Py_DECREF(table);
            return -1;
        }
    }
    status = PyModule_AddObjectRef(module, "CONVERSIONS", table);
    Py_DECREF(table);
    return status;
}

PyMODINIT_FUNC
PyInit__speedups(void)
{
    PyObject *module;

    if (intern(&str_resolve, "resolve") < 0 || intern(&str_memo, "memo") < 0 ||
        intern(&str_promotion_memo, "promotion_memo") < 0 ||
        intern(&str_dtype, "dtype") < 0 ||
        intern(&str_flag, "return_weak_type_flag") < 0 ||
        intern(&str_qualname, "__qualname__") < 0 ||
        intern(&str_promotion_key, "_promotion_key") < 0 ||
        intern(&str_rank_promotion, "rank_promotion") < 0 ||
        intern(&str_allow, "allow") < 0 || intern(&str_name, "name") < 0 ||
        intern(&str_nin, "nin") < 0 || intern(&str_astype, "astype") < 0 ||
        intern(&str_fast, "_fast") < 0 || intern(&str_hits, "_hits") < 0 ||
        intern(&str_order, "_order") < 0 ||
        intern(&str_enable_x64, "enable_x64") < 0 ||
        intern(&str_run, "run") < 0 || intern(&str_single, "single") < 0 ||
        intern(&str_results, "results") < 0 ||
        intern(&str_shape, "shape") < 0 ||
        intern(&str_strides, "strides") < 0 ||
        intern(&str_read_only,
               "an Array's memory is read-only (Arrays are immutable): "
               "copy it for a writable array, numpy.array(x)") < 0 ||
        intern(&str_nbytes, "nbytes") < 0 || intern(&str_base, "base") < 0 ||
        intern(&str_flags, "flags") < 0 ||
        intern(&str_owndata, "owndata") < 0 ||
        intern(&str_writeable, "writeable") < 0 ||
        intern(&str_nout, "nout") < 0 || intern(&str_safe, "safe") < 0 ||
        intern(&str_bind, "bind") < 0 ||
        intern(&str_lax_scalar, "lax.scalar") < 0) {
        return NULL;
    }
    out_kwnames = Py_BuildValue("(ss)", "out", "casting");
    if (out_kwnames == NULL) {
        return NULL;
    }
    if (PyType_Ready(&FastPath_Type) < 0 ||
        PyType_Ready(&FastElementwise_Type) < 0 ||
        PyType_Ready(&JitCall_Type) < 0 ||
        PyType_Ready(&FastPrimitive_Type) < 0 ||
        PyType_Ready(&ReadOnlyMemory_Type) < 0) {
        return NULL;
    }
    module = PyModule_Create(&speedups_module);
    if (module == NULL) {
        return NULL;
    }
    if (add_conversions(module) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    if (PyModule_AddIntConstant(module, "API_VERSION", API_VERSION) < 0 ||
        PyModule_AddObjectRef(module, "FastPath", (PyObject *)&FastPath_Type) <
            0 ||
        PyModule_AddObjectRef(module, "FastElementwise",
                              (PyObject *)&FastElementwise_Type) < 0 ||
        PyModule_AddObjectRef(module, "JitCall", (PyObject *)&JitCall_Type) <
            0 ||
        PyModule_AddObjectRef(module, "FastPrimitive",
                              (PyObject *)&FastPrimitive_Type) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
