// SPDX-License-Identifier: MIT
/* The fields of every event kind, in the order a record holds them: the one
 * list that the schema tables (schema.c, schema_cupti.c, schema_nccl.c, ...), the
 * sources that write records and the tools that read them all follow.
 *
 * CT_FIELDS_<KIND>(X, K) expands X(K, NAME, TYPE, name) once per field:
 * NAME makes the index F_<K>_<NAME>, TYPE the encoding CT_F_<TYPE>, name the
 * field's name in the schema ("ts", "correlation"). <KIND> is the kind's
 * CT_EV_ name without the prefix, and so is K where the indices are made:
 * F_KERNEL_CORRELATION is the index of kernel's correlation id in a
 * record's f[] and an event's v[], s[], sl[], F_KERNEL_N its number of
 * fields.
 *
 * Positions are the same in every file: the decoder reads files of every
 * 1.x version through these same tables (a minor version adds kinds and
 * header or footer fields, never changes a kind's fields), so a position
 * known at compile time holds for every file a tool reads. Changing a
 * list changes the file format. */
#ifndef CT_FIELDS_H
#define CT_FIELDS_H

#include "cuptrace/format.h"

/* ---- NVTX and control kinds (schema.c) ---- */

/* An NVTX event's attributes, shared by push, start and mark. F_NVTX_ATTR_*
 * number them from the first (domain). */
#define CT_FIELDS_NVTX_ATTR(X, K)                                                                  \
	X(K, DOMAIN, SID, domain)                                                                  \
	X(K, CATEGORY, U, category)                                                                \
	X(K, COLOR, U, color)                                                                      \
	X(K, PAYLOAD_TYPE, U, payload_type)                                                        \
	X(K, PAYLOAD, U, payload)                                                                  \
	X(K, MSG_ID, SID, msg_id)                                                                  \
	X(K, MSG, STR, msg)

#define CT_FIELDS_NVTX_PUSH(X, K)                                                                  \
	X(K, TS, TS, ts)                                                                           \
	CT_FIELDS_NVTX_ATTR(X, K)
#define CT_FIELDS_NVTX_POP(X, K)                                                                   \
	X(K, TS, TS, ts)                                                                           \
	X(K, DOMAIN, SID, domain)
#define CT_FIELDS_NVTX_START(X, K)                                                                 \
	X(K, TS, TS, ts)                                                                           \
	X(K, ID, U, id)                                                                            \
	CT_FIELDS_NVTX_ATTR(X, K)
#define CT_FIELDS_NVTX_END(X, K)                                                                   \
	X(K, TS, TS, ts)                                                                           \
	X(K, ID, U, id)                                                                            \
	X(K, DOMAIN, SID, domain)
#define CT_FIELDS_NVTX_MARK(X, K) CT_FIELDS_NVTX_PUSH(X, K)
/* user: named by the program (nvtxNameOsThread), not read from the OS */
#define CT_FIELDS_THREAD_NAME(X, K)                                                                \
	X(K, TS, TS, ts)                                                                           \
	X(K, TID, U, tid)                                                                          \
	X(K, NAME, STR, name)                                                                      \
	X(K, USER, U, user)
#define CT_FIELDS_CATEGORY(X, K)                                                                   \
	X(K, TS, TS, ts)                                                                           \
	X(K, DOMAIN, SID, domain)                                                                  \
	X(K, CATEGORY, U, category)                                                                \
	X(K, NAME, STR, name)
#define CT_FIELDS_CAPTURE(X, K)                                                                    \
	X(K, TS, TS, ts)                                                                           \
	X(K, ON, U, on)
#define CT_FIELDS_STEP(X, K)                                                                       \
	X(K, TS, TS, ts)                                                                           \
	X(K, STEP, U, step)
#define CT_FIELDS_RESET(X, K) X(K, TS, TS, ts)
/* The watchdog (watchdog.c): the NCCL context and task ids as the nccl_*
 * kinds have them; seq only when has_seq; in_flight ns. */
#define CT_FIELDS_HANG(X, K)                                                                       \
	X(K, TS, TS, ts)                                                                           \
	X(K, CTX, U, ctx)                                                                          \
	X(K, TASK, U, task)                                                                        \
	X(K, HAS_SEQ, U, has_seq)                                                                  \
	X(K, SEQ, U, seq)                                                                          \
	X(K, FUNC, SID, func)                                                                      \
	X(K, IN_FLIGHT, U, in_flight)

/* ---- CUPTI kinds (schema_cupti.c: why this order, TS ends, DELTA ids) ---- */

/* name: mangled, as CUPTI gives it; the tools demangle. */
#define CT_FIELDS_KERNEL(X, K)                                                                     \
	X(K, TS, TS, ts)                                                                           \
	X(K, END, TS, end)                                                                         \
	X(K, CORRELATION, DELTA, correlation)                                                      \
	X(K, DEVICE, U, device)                                                                    \
	X(K, CONTEXT, U, context)                                                                  \
	X(K, STREAM, U, stream)                                                                    \
	X(K, NAME, SID, name)                                                                      \
	X(K, GRID_X, U, grid_x)                                                                    \
	X(K, GRID_Y, U, grid_y)                                                                    \
	X(K, GRID_Z, U, grid_z)                                                                    \
	X(K, BLOCK_X, U, block_x)                                                                  \
	X(K, BLOCK_Y, U, block_y)                                                                  \
	X(K, BLOCK_Z, U, block_z)                                                                  \
	X(K, REGISTERS, U, registers)                                                              \
	X(K, STATIC_SMEM, U, static_smem)                                                          \
	X(K, DYNAMIC_SMEM, U, dynamic_smem)                                                        \
	X(K, GRAPH_ID, U, graph_id)                                                                \
	X(K, GRAPH_NODE, U, graph_node)
/* copy_kind, src_kind, dst_kind: CUPTI's memcpy and memory kinds.
 * src_device/dst_device differ from device for peer-to-peer copies. */
#define CT_FIELDS_MEMCPY(X, K)                                                                     \
	X(K, TS, TS, ts)                                                                           \
	X(K, END, TS, end)                                                                         \
	X(K, CORRELATION, DELTA, correlation)                                                      \
	X(K, BYTES, U, bytes)                                                                      \
	X(K, DEVICE, U, device)                                                                    \
	X(K, CONTEXT, U, context)                                                                  \
	X(K, STREAM, U, stream)                                                                    \
	X(K, COPY_KIND, U, copy_kind)                                                              \
	X(K, SRC_KIND, U, src_kind)                                                                \
	X(K, DST_KIND, U, dst_kind)                                                                \
	X(K, SRC_DEVICE, U, src_device)                                                            \
	X(K, DST_DEVICE, U, dst_device)                                                            \
	X(K, FLAGS, U, flags)                                                                      \
	X(K, GRAPH_ID, U, graph_id)                                                                \
	X(K, GRAPH_NODE, U, graph_node)
#define CT_FIELDS_MEMSET(X, K)                                                                     \
	X(K, TS, TS, ts)                                                                           \
	X(K, END, TS, end)                                                                         \
	X(K, CORRELATION, DELTA, correlation)                                                      \
	X(K, BYTES, U, bytes)                                                                      \
	X(K, DEVICE, U, device)                                                                    \
	X(K, CONTEXT, U, context)                                                                  \
	X(K, STREAM, U, stream)                                                                    \
	X(K, VALUE, U, value)                                                                      \
	X(K, MEMORY_KIND, U, memory_kind)                                                          \
	X(K, GRAPH_ID, U, graph_id)                                                                \
	X(K, GRAPH_NODE, U, graph_node)
/* type: CUpti_ActivitySynchronizationType; event: CUDA event id. */
#define CT_FIELDS_SYNC(X, K)                                                                       \
	X(K, TS, TS, ts)                                                                           \
	X(K, END, TS, end)                                                                         \
	X(K, CORRELATION, DELTA, correlation)                                                      \
	X(K, CONTEXT, U, context)                                                                  \
	X(K, STREAM, U, stream)                                                                    \
	X(K, TYPE, U, type)                                                                        \
	X(K, EVENT, U, event)
/* tid: OS thread id of the caller; api: 1 driver, 2 runtime (CUPTI's
 * callback domains); status: the call's return code. */
#define CT_FIELDS_CUDA_API(X, K)                                                                   \
	X(K, TS, TS, ts)                                                                           \
	X(K, END, TS, end)                                                                         \
	X(K, CORRELATION, DELTA, correlation)                                                      \
	X(K, TID, U, tid)                                                                          \
	X(K, NAME, SID, name)                                                                      \
	X(K, STATUS, U, status)                                                                    \
	X(K, API, U, api)                                                                          \
	X(K, CBID, U, cbid)
/* op: 1 allocation, 2 release (CUpti_ActivityMemoryOperationType). */
#define CT_FIELDS_GPU_MEMORY(X, K)                                                                 \
	X(K, TS, TS, ts)                                                                           \
	X(K, CORRELATION, DELTA, correlation)                                                      \
	X(K, OP, U, op)                                                                            \
	X(K, BYTES, U, bytes)                                                                      \
	X(K, ADDRESS, U, address)                                                                  \
	X(K, DEVICE, U, device)                                                                    \
	X(K, CONTEXT, U, context)                                                                  \
	X(K, STREAM, U, stream)                                                                    \
	X(K, MEMORY_KIND, U, memory_kind)
/* One per GPU, early in the file: what deviceProperties lists. */
#define CT_FIELDS_GPU_DEVICE(X, K)                                                                 \
	X(K, TS, TS, ts)                                                                           \
	X(K, DEVICE, U, device)                                                                    \
	X(K, NAME, STR, name)                                                                      \
	X(K, GLOBAL_MEMORY, U, global_memory)                                                      \
	X(K, CC_MAJOR, U, cc_major)                                                                \
	X(K, CC_MINOR, U, cc_minor)                                                                \
	X(K, SMS, U, sms)                                                                          \
	X(K, MAX_THREADS_PER_BLOCK, U, max_threads_per_block)                                      \
	X(K, MAX_WARPS_PER_SM, U, max_warps_per_sm)                                                \
	X(K, MAX_BLOCKS_PER_SM, U, max_blocks_per_sm)                                              \
	X(K, REGS_PER_BLOCK, U, regs_per_block)                                                    \
	X(K, REGS_PER_SM, U, regs_per_sm)                                                          \
	X(K, SMEM_PER_BLOCK, U, smem_per_block)                                                    \
	X(K, SMEM_PER_SM, U, smem_per_sm)                                                          \
	X(K, WARP_SIZE, U, warp_size)                                                              \
	X(K, L2_CACHE, U, l2_cache)                                                                \
	X(K, CORE_CLOCK_KHZ, U, core_clock_khz)                                                    \
	X(K, MEMORY_BANDWIDTH_KBS, U, memory_bandwidth_kbs)                                        \
	X(K, UUID, STR, uuid)
#define CT_FIELDS_GPU_CONTEXT(X, K)                                                                \
	X(K, TS, TS, ts)                                                                           \
	X(K, CONTEXT, U, context)                                                                  \
	X(K, DEVICE, U, device)                                                                    \
	X(K, NULL_STREAM, U, null_stream)
/* A cudaEventRecord (CUPTI's CUDA_EVENT record): the stream an event was
 * recorded on, and the call's correlation id. CUPTI gives it no time, so
 * it has no ts: the tools tie an event sync or stream wait to it
 * (wait_on_stream, wait_on_cuda_event_record_corr_id). */
#define CT_FIELDS_CUDA_EVENT(X, K)                                                                 \
	X(K, CORRELATION, DELTA, correlation)                                                      \
	X(K, CONTEXT, U, context)                                                                  \
	X(K, STREAM, U, stream)                                                                    \
	X(K, EVENT, U, event)
/* A CUDA call's correlation id and the external id pushed on its thread
 * when it was made (CUPTI's EXTERNAL_CORRELATION record; kind: CUPTI's
 * CUpti_ExternalCorrelationKind, the torch source pushes CUSTOM0 with its
 * operator's id). Like cuda_event it has no time. */
#define CT_FIELDS_EXT_CORR(X, K)                                                                   \
	X(K, CORRELATION, DELTA, correlation)                                                      \
	X(K, EXTERNAL, DELTA, external)                                                            \
	X(K, KIND, U, kind)
/* Never written as events: the bucket that CUPTI's own dropped-record
 * count goes into (CUPTI does not say of which kind they were). */
#define CT_FIELDS_CUPTI_DROPPED(X, K) X(K, TS, TS, ts)

/* ---- NCCL kinds (schema_nccl.c) ---- */

/* What every event that starts an NCCL operation begins with: the handle
 * the plugin returned to NCCL and the communicator's profiler context.
 * F_NCCL_START_* are these positions in each of those kinds. */
#define CT_FIELDS_NCCL_START(X, K)                                                                 \
	X(K, TS, TS, ts)                                                                           \
	X(K, ID, U, id)                                                                            \
	X(K, CTX, U, ctx)

/* comm: the communicator's hash */
#define CT_FIELDS_NCCL_COMM(X, K)                                                                  \
	X(K, TS, TS, ts)                                                                           \
	X(K, CTX, U, ctx)                                                                          \
	X(K, COMM, U, comm)                                                                        \
	X(K, NNODES, U, nnodes)                                                                    \
	X(K, NRANKS, U, nranks)                                                                    \
	X(K, RANK, I, rank)                                                                        \
	X(K, ABI, U, abi)                                                                          \
	X(K, NAME, STR, name)
#define CT_FIELDS_NCCL_FINI(X, K)                                                                  \
	X(K, TS, TS, ts)                                                                           \
	X(K, CTX, U, ctx)
#define CT_FIELDS_NCCL_GROUP_API(X, K)                                                             \
	CT_FIELDS_NCCL_START(X, K)                                                                 \
	X(K, DEPTH, U, depth)                                                                      \
	X(K, GRAPH, U, graph)
#define CT_FIELDS_NCCL_COLL_API(X, K)                                                              \
	CT_FIELDS_NCCL_START(X, K)                                                                 \
	X(K, PARENT, U, parent)                                                                    \
	X(K, FUNC, SID, func)                                                                      \
	X(K, DATATYPE, SID, datatype)                                                              \
	X(K, COUNT, U, count)                                                                      \
	X(K, ROOT, I, root)                                                                        \
	X(K, STREAM, U, stream)                                                                    \
	X(K, GRAPH, U, graph)
#define CT_FIELDS_NCCL_P2P_API(X, K)                                                               \
	CT_FIELDS_NCCL_START(X, K)                                                                 \
	X(K, PARENT, U, parent)                                                                    \
	X(K, FUNC, SID, func)                                                                      \
	X(K, DATATYPE, SID, datatype)                                                              \
	X(K, COUNT, U, count)                                                                      \
	X(K, STREAM, U, stream)                                                                    \
	X(K, GRAPH, U, graph)
#define CT_FIELDS_NCCL_LAUNCH(X, K)                                                                \
	CT_FIELDS_NCCL_START(X, K)                                                                 \
	X(K, PARENT, U, parent)                                                                    \
	X(K, STREAM, U, stream)
#define CT_FIELDS_NCCL_GROUP(X, K)                                                                 \
	CT_FIELDS_NCCL_START(X, K)                                                                 \
	X(K, LAUNCH, U, launch)
#define CT_FIELDS_NCCL_COLL(X, K)                                                                  \
	CT_FIELDS_NCCL_START(X, K)                                                                 \
	X(K, PARENT, U, parent)                                                                    \
	X(K, GROUP, U, group)                                                                      \
	X(K, SEQ, U, seq)                                                                          \
	X(K, FUNC, SID, func)                                                                      \
	X(K, DATATYPE, SID, datatype)                                                              \
	X(K, COUNT, U, count)                                                                      \
	X(K, ROOT, I, root)                                                                        \
	X(K, CHANNELS, U, channels)                                                                \
	X(K, WARPS, U, warps)                                                                      \
	X(K, ALGO, SID, algo)                                                                      \
	X(K, PROTO, SID, proto)                                                                    \
	X(K, RANK, I, rank)
#define CT_FIELDS_NCCL_P2P(X, K)                                                                   \
	CT_FIELDS_NCCL_START(X, K)                                                                 \
	X(K, PARENT, U, parent)                                                                    \
	X(K, GROUP, U, group)                                                                      \
	X(K, FUNC, SID, func)                                                                      \
	X(K, DATATYPE, SID, datatype)                                                              \
	X(K, COUNT, U, count)                                                                      \
	X(K, PEER, I, peer)                                                                        \
	X(K, CHANNELS, U, channels)                                                                \
	X(K, RANK, I, rank)
/* gpu_start: NCCL's raw GPU globaltimer value (ns, the GPU's clock) */
#define CT_FIELDS_NCCL_KERNEL_CH(X, K)                                                             \
	CT_FIELDS_NCCL_START(X, K)                                                                 \
	X(K, PARENT, U, parent)                                                                    \
	X(K, CHANNEL, U, channel)                                                                  \
	X(K, GPU_START, U, gpu_start)
#define CT_FIELDS_NCCL_STOP(X, K)                                                                  \
	X(K, TS, TS, ts)                                                                           \
	X(K, ID, U, id)
#define CT_FIELDS_NCCL_STATE(X, K)                                                                 \
	X(K, TS, TS, ts)                                                                           \
	X(K, ID, U, id)                                                                            \
	X(K, STATE, U, state)                                                                      \
	X(K, VALUE, U, value)

/* ---- PyTorch kinds (schema_torch.c) ---- */

/* An operator (aten or custom) or a record_function scope, written by the
 * package's observer when it ends (include/cuptrace/torch_abi.h).
 * ts, end: the library's clock. scope: CUPTRACE_TORCH_SCOPE_*. id: the
 * operator's id, from 1 in the process; the CUDA work it launched carries
 * it as external id (ext_corr). seq: torch's sequence number + 1 (0: none).
 * rf_tid: torch's own number of the thread that ran it (RecordFunction's
 * thread id); fwd_tid: of a backward op, that number of its forward op's
 * thread (0: none). tid: the OS thread it began on where that is not the
 * thread whose ring holds the record (a scope closed on another thread),
 * else 0. dims, types: with `shapes`, each input's sizes and type,
 * inputs separated by ';', sizes by ',' ("2,3;3" and "float;float"; a
 * non-tensor input has no sizes); stack: with `stack`, the Python frames,
 * innermost first, separated by ';'. Empty when not asked for. */
#define CT_FIELDS_TORCH_OP(X, K)                                                                   \
	X(K, TS, TS, ts)                                                                           \
	X(K, END, TS, end)                                                                         \
	X(K, ID, DELTA, id)                                                                        \
	X(K, SEQ, U, seq)                                                                          \
	X(K, NAME, STR, name)                                                                      \
	X(K, SCOPE, U, scope)                                                                      \
	X(K, RF_TID, U, rf_tid)                                                                    \
	X(K, FWD_TID, U, fwd_tid)                                                                  \
	X(K, TID, U, tid)                                                                          \
	X(K, DIMS, STR, dims)                                                                      \
	X(K, TYPES, STR, types)                                                                    \
	X(K, STACK, STR, stack)
/* An allocation (bytes > 0) or a free (bytes < 0) reported by torch's
 * allocators. device: -1 the CPU, else the CUDA device. allocated,
 * reserved: the allocator's totals on that device after it (reserved 0
 * where the allocator does not say). op: the id of the innermost operator
 * open on the thread (0: none). */
#define CT_FIELDS_TORCH_MEM(X, K)                                                                  \
	X(K, TS, TS, ts)                                                                           \
	X(K, PTR, U, ptr)                                                                          \
	X(K, BYTES, I, bytes)                                                                      \
	X(K, DEVICE, I, device)                                                                    \
	X(K, ALLOCATED, U, allocated)                                                              \
	X(K, RESERVED, U, reserved)                                                                \
	X(K, OP, U, op)

/* ---- MPI kinds (schema_mpi.c) ---- */

/* A communicator, written when this process first knows it (MPI_Init's
 * MPI_COMM_WORLD and MPI_COMM_SELF, a call that made one, else its first
 * use), again when MPI_Comm_set_name names it, and as a new one when a
 * freed handle comes back. id: the same on every member of the job: a hash
 * of its members' ranks in MPI_COMM_WORLD (in its own rank order; of an
 * intercommunicator, of both groups) and of how many communicators of
 * those members this process knew before it. handle: the program's handle
 * (its bits). size, rank: its size and this process's rank in it; remote:
 * an intercommunicator's remote size, 0 for an intracommunicator; parent:
 * the id of the communicator it was made from (0: none or not known);
 * name: MPI_Comm_get_name's. */
#define CT_FIELDS_MPI_COMM(X, K)                                                                   \
	X(K, TS, TS, ts)                                                                           \
	X(K, ID, U, id)                                                                            \
	X(K, HANDLE, U, handle)                                                                    \
	X(K, SIZE, U, size)                                                                        \
	X(K, RANK, I, rank)                                                                        \
	X(K, REMOTE, U, remote)                                                                    \
	X(K, PARENT, U, parent)                                                                    \
	X(K, NAME, STR, name)
/* A call, written when it returns. func: its name ("MPI_Send"). comm: the
 * communicator's id (0: none). seq: a collective's number on its
 * communicator, from 1, the same on every member (0: not a collective).
 * peer: the destination, source or root as a rank of comm, world_peer the
 * same rank in MPI_COMM_WORLD (both ct_mpi_rank's values where special;
 * CT_MPI_NO_PEER for calls without one); tag (CT_MPI_ANY_TAG,
 * CT_MPI_NO_TAG). count, datatype: the arguments (v variants: the counts
 * summed; a receive: what the status says arrived). bytes: what this
 * process sends, recv_bytes what it receives, as the arguments describe
 * them (a receive: as its status says). req: the id of the request a
 * non-blocking or persistent call made or started (0: none); the mpi_done
 * records of the requests a call completed come just before it on its
 * thread. status: the call's return code. */
#define CT_FIELDS_MPI_CALL(X, K)                                                                   \
	X(K, TS, TS, ts)                                                                           \
	X(K, END, TS, end)                                                                         \
	X(K, FUNC, SID, func)                                                                      \
	X(K, COMM, U, comm)                                                                        \
	X(K, SEQ, U, seq)                                                                          \
	X(K, PEER, I, peer)                                                                        \
	X(K, WORLD_PEER, I, world_peer)                                                            \
	X(K, TAG, I, tag)                                                                          \
	X(K, COUNT, U, count)                                                                      \
	X(K, DATATYPE, SID, datatype)                                                              \
	X(K, BYTES, U, bytes)                                                                      \
	X(K, RECV_BYTES, U, recv_bytes)                                                            \
	X(K, REQ, U, req)                                                                          \
	X(K, STATUS, I, status)
/* A call that may wait for other ranks (collectives, blocking sends and
 * receives, waits), as it is entered: a call still waiting when the
 * process died shows as this without its mpi_call. */
#define CT_FIELDS_MPI_ENTER(X, K)                                                                  \
	X(K, TS, TS, ts)                                                                           \
	X(K, FUNC, SID, func)                                                                      \
	X(K, COMM, U, comm)                                                                        \
	X(K, SEQ, U, seq)
/* A request completed by the call whose mpi_call follows on the thread:
 * ts its end; req the id its call gave it; peer, tag, bytes what its
 * status says (a receive) or what the call sent. */
#define CT_FIELDS_MPI_DONE(X, K)                                                                   \
	X(K, TS, TS, ts)                                                                           \
	X(K, REQ, U, req)                                                                          \
	X(K, PEER, I, peer)                                                                        \
	X(K, TAG, I, tag)                                                                          \
	X(K, BYTES, U, bytes)
/* The watchdog (watchdog.c): a collective in flight longer than
 * CUPTRACE_HANG_TIMEOUT; req: a non-blocking one's request (0: a blocking
 * call); in_flight ns. */
#define CT_FIELDS_MPI_HANG(X, K)                                                                   \
	X(K, TS, TS, ts)                                                                           \
	X(K, COMM, U, comm)                                                                        \
	X(K, SEQ, U, seq)                                                                          \
	X(K, FUNC, SID, func)                                                                      \
	X(K, REQ, U, req)                                                                          \
	X(K, IN_FLIGHT, U, in_flight)

/* ---- what is made of the lists ---- */

#define CT_FIELD_INDEX(K, NAME, TYPE, name) F_##K##_##NAME,
#define CT_FIELD_TYPE(K, NAME, TYPE, name)  CT_F_##TYPE,
#define CT_FIELD_NAME(K, NAME, TYPE, name)  #name,

/* enum { F_K_TS, ..., F_K_N }: a list's indices and its number of fields. */
#define CT_FIELD_ENUM(K) enum { CT_FIELDS_##K(CT_FIELD_INDEX, K) F_##K##_N };

/* The struct ct_schema of kind K, called kname. */
#define CT_SCHEMA(kname, K)                                                                        \
	{kname, F_##K##_N, {CT_FIELDS_##K(CT_FIELD_TYPE, K)}, {CT_FIELDS_##K(CT_FIELD_NAME, K)}}

CT_FIELD_ENUM(NVTX_ATTR)
CT_FIELD_ENUM(NVTX_PUSH)
CT_FIELD_ENUM(NVTX_POP)
CT_FIELD_ENUM(NVTX_START)
CT_FIELD_ENUM(NVTX_END)
CT_FIELD_ENUM(NVTX_MARK)
CT_FIELD_ENUM(THREAD_NAME)
CT_FIELD_ENUM(CATEGORY)
CT_FIELD_ENUM(CAPTURE)
CT_FIELD_ENUM(STEP)
CT_FIELD_ENUM(RESET)
CT_FIELD_ENUM(HANG)

CT_FIELD_ENUM(KERNEL)
CT_FIELD_ENUM(MEMCPY)
CT_FIELD_ENUM(MEMSET)
CT_FIELD_ENUM(SYNC)
CT_FIELD_ENUM(CUDA_API)
CT_FIELD_ENUM(GPU_MEMORY)
CT_FIELD_ENUM(GPU_DEVICE)
CT_FIELD_ENUM(GPU_CONTEXT)
CT_FIELD_ENUM(CUDA_EVENT)
CT_FIELD_ENUM(CUPTI_DROPPED)
CT_FIELD_ENUM(EXT_CORR)

CT_FIELD_ENUM(TORCH_OP)
CT_FIELD_ENUM(TORCH_MEM)

CT_FIELD_ENUM(MPI_COMM)
CT_FIELD_ENUM(MPI_CALL)
CT_FIELD_ENUM(MPI_ENTER)
CT_FIELD_ENUM(MPI_DONE)
CT_FIELD_ENUM(MPI_HANG)

CT_FIELD_ENUM(NCCL_START)
CT_FIELD_ENUM(NCCL_COMM)
CT_FIELD_ENUM(NCCL_FINI)
CT_FIELD_ENUM(NCCL_GROUP_API)
CT_FIELD_ENUM(NCCL_COLL_API)
CT_FIELD_ENUM(NCCL_P2P_API)
CT_FIELD_ENUM(NCCL_LAUNCH)
CT_FIELD_ENUM(NCCL_GROUP)
CT_FIELD_ENUM(NCCL_COLL)
CT_FIELD_ENUM(NCCL_P2P)
CT_FIELD_ENUM(NCCL_KERNEL_CH)
CT_FIELD_ENUM(NCCL_STOP)
CT_FIELD_ENUM(NCCL_STATE)

/* Every kind but cuda_event and ext_corr starts with its ts: code that handles many
 * kinds at once reads it at F_TS. */
#define F_TS 0
_Static_assert(F_NVTX_PUSH_TS == F_TS && F_NVTX_POP_TS == F_TS && F_NVTX_START_TS == F_TS &&
		   F_NVTX_END_TS == F_TS && F_NVTX_MARK_TS == F_TS && F_THREAD_NAME_TS == F_TS &&
		   F_CATEGORY_TS == F_TS && F_CAPTURE_TS == F_TS && F_STEP_TS == F_TS &&
		   F_RESET_TS == F_TS && F_HANG_TS == F_TS,
	       "an NVTX or control kind does not start with ts");
_Static_assert(F_KERNEL_TS == F_TS && F_MEMCPY_TS == F_TS && F_MEMSET_TS == F_TS &&
		   F_SYNC_TS == F_TS && F_CUDA_API_TS == F_TS && F_GPU_MEMORY_TS == F_TS &&
		   F_GPU_DEVICE_TS == F_TS && F_GPU_CONTEXT_TS == F_TS && F_CUPTI_DROPPED_TS == F_TS,
	       "a CUPTI kind other than cuda_event, ext_corr does not start with ts");
_Static_assert(F_TORCH_OP_TS == F_TS && F_TORCH_MEM_TS == F_TS,
	       "a PyTorch kind does not start with ts");
_Static_assert(F_MPI_COMM_TS == F_TS && F_MPI_CALL_TS == F_TS && F_MPI_ENTER_TS == F_TS &&
		   F_MPI_DONE_TS == F_TS && F_MPI_HANG_TS == F_TS,
	       "an MPI kind does not start with ts");
_Static_assert(F_NCCL_COMM_TS == F_TS && F_NCCL_FINI_TS == F_TS && F_NCCL_START_TS == F_TS &&
		   F_NCCL_STOP_TS == F_TS && F_NCCL_STATE_TS == F_TS,
	       "an NCCL kind does not start with ts");

#endif
