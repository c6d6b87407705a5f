-- WaitStatsSQL
SELECT wait_type, waiting_tasks_count, wait_time_ms, signal_wait_time_ms
FROM sys.dm_os_wait_stats WHERE waiting_tasks_count > 0 OR wait_time_ms > 0;

-- PerfCountersSQL
SELECT RTRIM(object_name), RTRIM(counter_name), RTRIM(instance_name), cntr_value, cntr_type
FROM sys.dm_os_performance_counters
WHERE (RTRIM(object_name) LIKE N'%:SQL Statistics' AND counter_name = N'Batch Requests/sec')
   OR (RTRIM(object_name) LIKE N'%:Databases' AND instance_name IN (N'_Total', N'obsbench')
       AND counter_name IN (N'Transactions/sec', N'Log Flushes/sec', N'Log Bytes Flushed/sec', N'Write Transactions/sec'))
   OR (RTRIM(object_name) LIKE N'%:Database Replica' AND instance_name IN (N'_Total', N'obsbench')
       AND counter_name IN (N'Transaction Delay', N'Mirrored Write Transactions/sec'));

-- SchedulerCPUSQL
SELECT si.ms_ticks - rb.[timestamp], CAST(rb.record AS nvarchar(max))
FROM sys.dm_os_ring_buffers rb CROSS JOIN sys.dm_os_sys_info si
WHERE rb.ring_buffer_type = N'RING_BUFFER_SCHEDULER_MONITOR' AND rb.record LIKE N'%<SystemHealth>%';

-- XESessionLossSQL
SELECT name, dropped_event_count, dropped_buffer_count, blocked_event_fire_time FROM sys.dm_xe_sessions;

-- ActiveWaitsSQL
SELECT COALESCE(r.wait_type, N'') FROM sys.dm_exec_requests r
JOIN sys.dm_exec_sessions s ON s.session_id = r.session_id
WHERE s.program_name = N'obsbench-driver' AND r.session_id <> @@SPID;

-- InspectTracesSQL
SELECT id, status, COALESCE(path, N''), is_rowset, is_default, COALESCE(max_size, 0), COALESCE(max_files, 0), is_rollover,
       COALESCE(event_count, 0), COALESCE(dropped_event_count, -1), COALESCE(reader_spid, 0)
FROM sys.traces ORDER BY id;

-- InspectSessionsSQL
SELECT COALESCE(es.name, xs.name), CASE WHEN xs.name IS NULL THEN 0 ELSE 1 END,
       COALESCE(es.event_retention_mode_desc, N''), COALESCE(es.max_dispatch_latency, 0), -- ms; -1: INFINITE
       COALESCE(CAST(es.track_causality AS int), 0),
       COALESCE(xs.dropped_event_count, 0), COALESCE(xs.dropped_buffer_count, 0), COALESCE(xs.blocked_event_fire_time, 0),
       COALESCE(STUFF((SELECT N',' + t.name FROM sys.server_event_session_targets t WHERE t.event_session_id = es.event_session_id ORDER BY t.name FOR XML PATH('')), 1, 1, N''), N'')
FROM sys.server_event_sessions es FULL JOIN sys.dm_xe_sessions xs ON xs.name = es.name
ORDER BY 1;

-- InspectAuditsSQL
SELECT name, status_desc, COALESCE(audit_file_path, N'') FROM sys.dm_server_audit_status ORDER BY name;

-- replicasSQL
SELECT ag.name, ar.replica_server_name, ar.availability_mode_desc, ar.failover_mode_desc,
       CASE WHEN rs.role_desc = N'PRIMARY' THEN 1 ELSE 0 END, COALESCE(CAST(rs.is_local AS int), 0)
FROM sys.availability_groups ag
JOIN sys.availability_replicas ar ON ar.group_id = ag.group_id
LEFT JOIN sys.dm_hadr_availability_replica_states rs ON rs.replica_id = ar.replica_id
WHERE ag.group_id IN (SELECT d.group_id FROM sys.availability_databases_cluster d WHERE d.database_name = @p1)
ORDER BY ag.name, ar.replica_server_name;

