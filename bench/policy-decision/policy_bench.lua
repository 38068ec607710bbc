-- policy_bench.lua - ns per decision of the Lua peer (tests/lab/job_submit.lua), run by the
-- standalone Lua 5.1 interpreter with a stand-in `slurm` table, on the same job mix as
-- policy_bench.cpp. Usage: lua5.1 policy_bench.lua <job_submit.lua> [iterations]
slurm = { SUCCESS = 0, ESLURM_INVALID_ACCOUNT = 2045, ESLURM_INVALID_TIME_LIMIT = 2051,
          ESLURM_ACCOUNTING_POLICY = 2050, log_user = function() end, log_info = function() end }
dofile(arg[1])
local n = tonumber(arg[2] or "1000000")
local NO_VAL, NO_VAL16, NO_VAL64 = 4294967294, 65534, 18446744073709551614
local function job(qos, account, per_job, per_node)
    return { account = account, qos = qos, tres_per_job = per_job, tres_per_node = per_node,
             min_nodes = NO_VAL, num_tasks = NO_VAL, time_limit = NO_VAL, pn_min_memory = NO_VAL64,
             cpus_per_task = NO_VAL16 }
end
local accepted = 0
local start = os.clock()
for i = 0, n - 1 do
    local k = i % 4
    local d
    if k == 0 then d = job(nil, "team-a", "gres:gpu:2")
    elseif k == 1 then d = job("general", "team-a", "gres:gpu:2")
    elseif k == 2 then d = job("spot", "team-a", "gres:gpu:2")
    else d = job(nil, "default", nil, "gres:gpu:1") end
    if slurm_job_submit(d, {}, 1001) == 0 then accepted = accepted + 1 end
end
print(string.format("%.0f", (os.clock() - start) * 1e9 / n))
