--[[
job_submit.lua - allot's policy written the way a site would without allot: the peer that
bench/submit-throughput measures job_submit/allot against. Same rules as lib/policy.cpp for
tests/lab/allot-lab.yaml, with the caps written into the script (Lua cannot read slurmctld's
QOS cache, which is one reason allot is a C++ plugin).
--]]

local DEFAULT_ACCOUNT = "default"
local TEAMS = { ["team-a"] = { qos = "team-a", gpus = 8 }, ["team-b"] = { qos = "team-b", gpus = 4 } }
local GENERAL = { qos = "general", per_team = 4, max = 3 * 1440, default = 1440 }
local SPOT = { qos = "spot", max = 1440, default = 240, grace = 10, signal = 15 }
local MEM_PER_GPU, CPUS_PER_GPU = 8192, 2
local NO_VAL, NO_VAL16, NO_VAL64 = 4294967294, 65534, 18446744073709551614

local function gpus_in(tres)
    if tres == nil then return 0 end
    local total = 0
    for entry in string.gmatch(tres, "[^,]+") do
        local name, rest = string.match(entry, "^gres[:/](%w+)(.*)$")
        if name == "gpu" then
            local n = string.match(rest, ":(%d+)$")
            total = total + (tonumber(n) or 1)
        end
    end
    return total
end

local function set(v) return v ~= nil and v ~= NO_VAL and v ~= NO_VAL16 and v ~= 0 end

local function count_gpus(d)
    local nodes = set(d.min_nodes) and d.min_nodes or 1
    local tasks = set(d.num_tasks) and d.num_tasks or 1
    local best = gpus_in(d.tres_per_job)
    best = math.max(best, gpus_in(d.tres_per_node) * nodes)
    best = math.max(best, gpus_in(d.tres_per_task) * tasks)
    best = math.max(best, gpus_in(d.tres_per_socket) * nodes)
    return best
end

function slurm_job_submit(d, part_list, submit_uid)
    local account = d.account or d.default_account
    local gpus = count_gpus(d)
    if account == DEFAULT_ACCOUNT then
        if gpus > 0 then
            slurm.log_user("you are not yet in a team with a GPU allocation; submit with -A <team>")
            return slurm.ESLURM_INVALID_ACCOUNT
        end
        return slurm.SUCCESS
    end
    local team = TEAMS[account]
    if team == nil then return slurm.SUCCESS end
    local qos, cap, tier = d.qos, team.gpus, nil
    if qos == nil or qos == team.qos then
        tier = "project"; d.qos = team.qos
    elseif qos == GENERAL.qos then
        tier = GENERAL; cap = GENERAL.per_team
    elseif qos == SPOT.qos then
        tier = SPOT; cap = nil
    else
        return slurm.SUCCESS
    end
    if tier ~= "project" then
        if d.time_limit == NO_VAL then d.time_limit = tier.default end
        if d.time_limit > tier.max then
            slurm.log_user("jobs in this tier may run at most %d minutes", tier.max)
            return slurm.ESLURM_INVALID_TIME_LIMIT
        end
    end
    if cap ~= nil and gpus > cap then
        slurm.log_user("this job asks for %d GPUs but the cap is %d", gpus, cap)
        return slurm.ESLURM_ACCOUNTING_POLICY
    end
    if gpus > 0 then
        if d.pn_min_memory == NO_VAL64 and d.mem_per_tres == nil then
            d.mem_per_tres = "gres:gpu:" .. MEM_PER_GPU
        end
        if d.cpus_per_task == NO_VAL16 and d.cpus_per_tres == nil then
            d.cpus_per_tres = "gres:gpu:" .. CPUS_PER_GPU
        end
    end
    if tier == SPOT then
        d.requeue = 1
        if d.warn_signal == nil or d.warn_signal == 0 or d.warn_signal == NO_VAL16 then
            d.warn_signal = SPOT.signal; d.warn_time = SPOT.grace; d.warn_flags = 1
        end
    end
    return slurm.SUCCESS
end

function slurm_job_modify(d, job, part_list, modify_uid)
    return slurm.SUCCESS
end

slurm.log_info("allot lua peer loaded")
return slurm.SUCCESS
